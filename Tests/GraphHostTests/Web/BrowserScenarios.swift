import Foundation
import Glibc
import XCTest

/// The browser tier's one Chromium: `Tests/Browser/scenarios.py --serve`, asked for one scenario at a time on its
/// standard input and running each in a tab of its own, with no cookie left from the one before. It starts with the
/// first scenario asked for (`start`). A server whose process ended is replaced at the next scenario; one whose
/// scenario gave no result in time is ended, its Chromium with it, so the next scenario starts another. `close()`
/// ends it (WebPageTests' class `tearDown`).
final class BrowserScenarios {
    /// A scenario under way: what it said on standard error so far, and its result once it is done.
    struct Scenario {
        let server: BrowserScenarios
        let id: Int
        let name: String
        /// Where its part of the server's standard error starts (bytes).
        let errorOffset: Int

        /// What it said on standard error so far (the page's console follows a failure).
        var errorText: String { server.errorText(from: errorOffset) }

        /// Whether it has its result, or its server ended.
        var ended: Bool { server.reply(id) != nil || !server.isRunning }

        /// Waits until it said `text` on standard error; false after `timeout` seconds, or once it ended without.
        func waitForError(containing text: String, timeout: TimeInterval = 120) -> Bool {
            _ = TestSupport.waitUntil(timeout: timeout) { errorText.contains(text) || ended }
            return errorText.contains(text)
        }

        /// Waits for its result: the JSON object the scenario returned. Throws, with what it said on standard error,
        /// when it failed, gave no result within `timeout` seconds (its server is then ended) or its server ended.
        func result(timeout: TimeInterval = 120) throws -> [String: Any] {
            _ = TestSupport.waitUntil(timeout: timeout) { ended }
            if let reply = server.reply(id) {
                if let result = reply["result"] as? [String: Any] { return result }
                throw TestSupport.ToolFailure(
                    description: "scenario \(name) failed: \(reply["error"] ?? reply)\n\(errorText)")
            }
            let why =
                server.isRunning
                ? "gave no result within \(Int(timeout)) s"
                : "ended with the browser's process (status \(server.process.terminationStatus))"
            server.end(waiting: 0)
            throw TestSupport.ToolFailure(description: "scenario \(name) \(why):\n\(errorText)")
        }
    }

    nonisolated(unsafe) private static var shared: BrowserScenarios?

    /// Starts a scenario (`arguments`: its name, then its own) in the class's Chromium; `environment` adds to the
    /// test's own for the tools the scenario runs (a private PipeWire's).
    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> Scenario {
        try TestTier.require(.browser, .long, for: "Chromium")
        if let server = shared, !server.isRunning {
            if !server.ended {
                print(
                    "the browser's process had ended (status \(server.process.terminationStatus)): starting another; "
                        + "the end of what it said:\n\(server.errorText(from: 0).suffix(4000))")
            }
            server.end(waiting: 0)
            shared = nil
        }
        let server = try shared ?? BrowserScenarios()
        shared = server
        return try server.ask(arguments, environment: environment)
    }

    /// Ends the class's Chromium, if one was started.
    static func close() {
        shared?.end(waiting: 30)
        shared = nil
    }

    private let process = Process()
    private let outURL: URL
    private let errURL: URL
    /// This end of the socket pair the server reads as its standard input: a socket, so that a request sent to a
    /// server that just ended fails (MSG_NOSIGNAL) rather than raising SIGPIPE in the tests.
    private let input: Int32
    private var next = 1
    private var replies: [Int: [String: Any]] = [:]
    private var ended = false

    private init() throws {
        var ends: [Int32] = [-1, -1]
        // Close-on-exec: no other child may hold either end, or the server would never see its input end.
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw TestSupport.ToolFailure(description: "socketpair failed: errno \(errno)")
        }
        input = ends[0]
        let name = "browser-\(getpid())-\(UUID().uuidString)"
        outURL = TestSupport.directory.appendingPathComponent(name + ".out")
        errURL = TestSupport.directory.appendingPathComponent(name + ".err")
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let handles = [
            FileHandle(fileDescriptor: ends[1], closeOnDealloc: true), try FileHandle(forWritingTo: outURL),
            try FileHandle(forWritingTo: errURL),
        ]
        defer { for handle in handles { try? handle.close() } }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [TestSupport.root.appendingPathComponent("Tests/Browser/scenarios.py").path, "--serve"]
        process.environment = ProcessInfo.processInfo.environment
        (process.standardInput, process.standardOutput, process.standardError) = (handles[0], handles[1], handles[2])
        do {
            try process.run()
        } catch {
            Glibc.close(input)
            throw error
        }
    }

    private var isRunning: Bool { process.isRunning }

    private func ask(_ arguments: [String], environment: [String: String]) throws -> Scenario {
        let id = next
        next += 1
        let request: [String: Any] = [
            "id": id, "scenario": arguments[0], "arguments": Array(arguments.dropFirst()), "environment": environment,
        ]
        let offset = errorText(from: 0).utf8.count
        let line = try JSONSerialization.data(withJSONObject: request) + [0x0A]
        let sent = line.withUnsafeBytes { send(input, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == line.count else {
            throw TestSupport.ToolFailure(
                description: "the browser's process did not take scenario \(arguments[0]) (errno \(errno)):\n"
                    + errorText(from: offset))
        }
        return Scenario(server: self, id: id, name: arguments[0], errorOffset: offset)
    }

    /// The reply to request `id`, once the server wrote it.
    private func reply(_ id: Int) -> [String: Any]? {
        if replies[id] == nil {
            let out = String(decoding: FileManager.default.contents(atPath: outURL.path) ?? Data(), as: UTF8.self)
            for line in out.split(separator: "\n") {
                guard let reply = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let number = reply["id"] as? Int
                else { continue }
                replies[number] = reply
            }
        }
        return replies[id]
    }

    private func errorText(from offset: Int) -> String {
        let data = FileManager.default.contents(atPath: errURL.path) ?? Data()
        return String(decoding: data.dropFirst(offset), as: UTF8.self)
    }

    /// Ends the server: the end of its input closes Chromium and ends it; still running after `waiting` seconds, it
    /// gets SIGTERM (it closes Chromium then too), and 10 s later its process group (Chromium and its driver) gets
    /// SIGKILL, as whatever of that group is left once it ended does.
    private func end(waiting: TimeInterval) {
        guard !ended else { return }
        ended = true
        Glibc.close(input)
        let pid = process.processIdentifier
        if !TestSupport.waitUntil(timeout: waiting, { !isRunning }) {
            kill(pid, SIGTERM)
            if !TestSupport.waitUntil(timeout: 10, { !isRunning }) { kill(-pid, SIGKILL) }
        }
        process.waitUntilExit()
        kill(-pid, SIGKILL)
    }
}
