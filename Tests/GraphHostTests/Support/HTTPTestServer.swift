import Foundation

/// A loopback HTTP server (Tests/Support/http-server.py) serving one folder, started and stopped by a test.
final class HTTPTestServer {
    let process = Process()
    let port: Int
    let root: String

    let scheme: String

    /// `tls`: serve HTTPS with a freshly made self-signed certificate.
    init(tls: Bool = false) throws {
        root = TestSupport.directory.appendingPathComponent("http-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let script = TestSupport.root.appendingPathComponent("Tests/Support/http-server.py")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script.path, root]
        scheme = tls ? "https" : "http"
        if tls {
            try TestSupport.run([
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                "-keyout", root + "/key.pem", "-out", root + "/cert.pem",
            ])
            process.arguments! += [root + "/cert.pem", root + "/key.pem"]
        }
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        var line = Data()
        while let byte = try out.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
            line += byte
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            throw TestSupport.ToolFailure(description: "the HTTP test server did not start")
        }
        self.port = port
    }

    /// Puts a file in the served folder; returns its URL (with `query` appended).
    func serve(_ path: String, as name: String, query: String = "") throws -> String {
        let target = root + "/" + name
        if !FileManager.default.fileExists(atPath: target) {
            try FileManager.default.copyItem(atPath: path, toPath: target)
        }
        return url(name + (query.isEmpty ? "" : "?" + query))
    }

    func url(_ path: String) -> String { "\(scheme)://127.0.0.1:\(port)/\(path)" }

    /// The start offsets of the Range requests for `name` the server honoured so far.
    func rangeRequests(for name: String) -> [Int] {
        let log = (try? String(contentsOfFile: root + "/ranges.log", encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            return parts.count == 2 && parts[0] == name ? Int(parts[1]) : nil
        }
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    deinit { if process.isRunning { stop() } }
}
