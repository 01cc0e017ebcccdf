import Foundation

/// A private Icecast on 127.0.0.1 (scripts/icecast-loopback: start, meta, source, pause, resume, stop).
enum IcecastLoopback {
    static let script = TestSupport.root.appendingPathComponent("scripts/icecast-loopback")

    /// Starts one; returns its folder (for the script's other commands) and the URL of its radio mount.
    static func start() throws -> (dir: String, url: String) {
        let start = try TestSupport.execute(script, ["start"])
        let exports = String(decoding: start.out, as: UTF8.self)
        guard start.status == 0 else {
            throw TestSupport.ToolFailure(
                description: "icecast-loopback start: " + String(decoding: start.err, as: UTF8.self))
        }
        let env = TestSupport.exports(exports)
        guard let dir = env["ICECAST_DIR"], let url = env["ICECAST_URL"] else {
            throw TestSupport.ToolFailure(description: "no ICECAST_URL in \(exports)")
        }
        return (dir, url)
    }
}
