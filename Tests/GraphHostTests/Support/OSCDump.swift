import Foundation

/// oscdump (liblo-tools) listening on a free UDP port of 127.0.0.1, and what it has printed so far.
final class OSCDump {
    let port: Int
    private let process: HeadlessPipeWire.Running

    /// Starts oscdump and waits until its port is bound.
    init(environment: [String: String]) throws {
        port = try OSCTests.freePort()
        process = try HeadlessPipeWire.Running(
            URL(fileURLWithPath: "/usr/bin/oscdump"), ["-L", "\(port)"], environment: environment)
        let port = port
        guard TestSupport.waitUntil({ !OSCTests.boundAddresses(port: port).isEmpty }) else {
            stop()
            throw TestSupport.ToolFailure(description: "oscdump did not bind \(port)")
        }
    }

    /// Every message printed so far, a line each.
    var text: String { (try? String(contentsOf: process.outURL, encoding: .utf8)) ?? "" }

    func stop() {
        kill(process.process.processIdentifier, SIGTERM)
        _ = process.wait()
    }
}
