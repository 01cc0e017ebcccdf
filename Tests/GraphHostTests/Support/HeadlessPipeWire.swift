import Foundation
import XCTest

@testable import GraphHost

/// A private PipeWire daemon (scripts/pipewire-headless) for one test, and helpers to play and record through it.
final class HeadlessPipeWire {
    static let script = TestSupport.root.appendingPathComponent("scripts/pipewire-headless")
    let directory: String
    let environment: [String: String]

    /// The second null sink a peer client plays to (`addSink`).
    static let peerSink = "graphhost_peer_sink"

    /// Starts a daemon (quantum forced when given); throws, so the test fails, when it cannot start. With `noSink`
    /// its session manager has no sink until `addSink()`, as right after a restart.
    init(quantum: Int? = nil, directory: String? = nil, noSink: Bool = false) throws {
        try TestTier.require(.live, .browser, .long, for: "a private PipeWire daemon")
        var env = ProcessInfo.processInfo.environment
        if let quantum { env["PW_QUANTUM"] = "\(quantum)" }
        if noSink { env["PW_NO_SINK"] = "1" }
        let result = try Self.execute(Self.script, ["start"] + (directory.map { [$0] } ?? []), environment: env)
        guard result.status == 0 else {
            throw TestSupport.ToolFailure(description: "pipewire-headless start failed: \(result.err)")
        }
        let exports = TestSupport.exports(result.out)
        guard let dir = exports["PW_TEST_DIR"] else {
            throw TestSupport.ToolFailure(description: "no PW_TEST_DIR in: \(result.out)")
        }
        self.directory = dir
        environment = ProcessInfo.processInfo.environment.merging(exports) { $1 }
    }

    func stop() {
        _ = try? Self.execute(Self.script, ["stop", directory], environment: environment)
    }

    /// Adds a null sink: the test sink (the default) when none is named.
    func addSink(_ name: String? = nil) throws {
        _ = try script(["add-sink", directory] + (name.map { [$0] } ?? []))
    }

    /// Whether the daemon has a node with this node.name.
    func hasNode(_ name: String) throws -> Bool {
        try Self.execute(URL(fileURLWithPath: "/usr/bin/pw-cli"), ["ls", "Node"], environment: environment).out
            .contains("node.name = \"\(name)\"")
    }

    func script(_ arguments: [String]) throws -> String {
        let r = try Self.execute(Self.script, arguments, environment: environment)
        guard r.status == 0 else {
            throw TestSupport.ToolFailure(description: "pipewire-headless \(arguments): \(r.err)")
        }
        return r.out
    }

    static func execute(_ executable: URL, _ arguments: [String], environment: [String: String]) throws -> (
        status: Int32, out: String, err: String
    ) {
        let r = try TestSupport.execute(executable, arguments, environment: environment)
        return (r.status, String(decoding: r.out, as: UTF8.self), String(decoding: r.err, as: UTF8.self))
    }

    /// A started process with its output collected into files.
    final class Running {
        let process = Process()
        let outURL: URL, errURL: URL
        /// `input`: the pipe the process reads (none: it reads an empty input).
        init(_ executable: URL, _ arguments: [String], environment: [String: String], input: Pipe? = nil) throws {
            outURL = TestSupport.directory.appendingPathComponent(UUID().uuidString + ".out")
            errURL = TestSupport.directory.appendingPathComponent(UUID().uuidString + ".err")
            FileManager.default.createFile(atPath: outURL.path, contents: nil)
            FileManager.default.createFile(atPath: errURL.path, contents: nil)
            process.executableURL = executable
            process.arguments = arguments
            process.environment = environment
            process.standardOutput = try FileHandle(forWritingTo: outURL)
            process.standardError = try FileHandle(forWritingTo: errURL)
            process.standardInput = input ?? FileHandle.nullDevice
            try process.run()
        }
        /// Waits for the process; one still running after `timeout` seconds is killed (and reported as status -9).
        func wait(timeout: TimeInterval = 60) -> (status: Int32, out: String, err: String) {
            if !TestSupport.waitUntil(timeout: timeout, { !process.isRunning }) {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return (
                    -9, (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
                    "killed after \(timeout) s: " + ((try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
                )
            }
            process.waitUntilExit()
            return (
                process.terminationStatus, (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
                (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
            )
        }
        func interrupt() { process.interrupt() }
        /// Standard output so far.
        var outputText: String { (try? String(contentsOf: outURL, encoding: .utf8)) ?? "" }
        /// Standard error so far.
        var errorText: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }
        /// Waits until standard error contains `text`; false after `timeout` seconds.
        func waitForError(containing text: String, timeout: TimeInterval = 30) -> Bool {
            TestSupport.waitUntil(timeout: timeout) { errorText.contains(text) }
        }
    }

    /// A `graphhost run`'s control socket, reached with `graphhost ctl` as a user would.
    struct Control {
        let socket: String
        let environment: [String: String]

        /// Waits until the socket exists (a run creates it before it connects to PipeWire).
        func waitForSocket(timeout: TimeInterval = 30) -> Bool {
            TestSupport.waitUntil(timeout: timeout) { FileManager.default.fileExists(atPath: socket) }
        }

        func ctl(_ words: [String]) throws -> (status: Int32, out: String) {
            let r = try HeadlessPipeWire.execute(
                TestSupport.executable, ["ctl", "--socket", socket] + words, environment: environment)
            return (r.status, r.out)
        }

        /// The `status` reply's status object.
        func status() throws -> [String: Any] {
            let out = try ctl(["status"]).out
            let object = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any]
            guard let status = object?["status"] as? [String: Any] else {
                throw TestSupport.ToolFailure(description: "no status in: \(out)")
            }
            return status
        }

        func position() throws -> Double { (try status()["position"] as? Double) ?? -1 }

        /// Waits until the run has played `seconds` of audio, asking every `every` seconds (each asking is a process).
        func waitForPosition(_ seconds: Double, timeout: TimeInterval = 30, every: TimeInterval = 0.01) throws -> Bool {
            try TestSupport.waitUntil(timeout: timeout, every: every) { try position() >= seconds }
        }
    }

    func control(_ socket: String) -> Control { Control(socket: socket, environment: environment) }

    /// A raw client of a run's control socket: what it sends, and the replies and events it has read so far.
    final class SocketClient {
        let fd: Int32
        private(set) var text = ""
        /// The host hung up.
        private(set) var ended = false

        init(socket: String) throws {
            fd = CommandServer.connectClient(socket)
            guard fd >= 0 else { throw TestSupport.ToolFailure(description: "cannot connect to \(socket)") }
        }

        /// A client that sent `subscribe`: it receives events as JSON lines.
        static func subscriber(_ socket: String) throws -> SocketClient {
            let client = try SocketClient(socket: socket)
            client.send(Array("subscribe\n".utf8))
            return client
        }

        deinit { close(fd) }

        func send(_ bytes: [UInt8]) {
            _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        /// Reads until what arrived satisfies `condition`; false after `timeout` seconds or at end of file.
        func waitFor(timeout: TimeInterval = 30, _ condition: (String) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            var chunk = [UInt8](repeating: 0, count: 65536)
            while !condition(text) {
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { return false }
                var request = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&request, 1, Int32(left * 1000) + 1) > 0 else { continue }
                let n = recv(fd, &chunk, chunk.count, 0)
                guard n > 0 else {
                    ended = true
                    return condition(text)
                }
                text += String(decoding: chunk[0..<n], as: UTF8.self)
            }
            return true
        }

        /// Says it will send no more, then reads every reply until the host hangs up; false after `timeout` seconds.
        func readToEnd(timeout: TimeInterval = 30) -> Bool {
            shutdown(fd, Int32(SHUT_WR))
            return waitFor(timeout: timeout) { _ in self.ended }
        }

        /// Waits for a whole line containing `fragment`.
        func waitForLine(containing fragment: String, timeout: TimeInterval = 30) -> Bool {
            waitFor(timeout: timeout) {
                $0.split(separator: "\n").dropLast($0.hasSuffix("\n") ? 0 : 1).contains { $0.contains(fragment) }
            }
        }
    }

    /// Starts pw-record on a null sink's monitor (32-bit float; the test sink unless named) and waits until it is
    /// linked. A monitor recording carries the daemon's timer slips: it judges the PipeWire path against a peer, never
    /// sound.
    func record(to path: String, sink: String? = nil) throws -> Running {
        let sink = sink ?? environment["PW_TEST_SINK"] ?? "graphhost_test_sink"
        let node = sink + "_rec"
        // pw-record handles its buffers on its main loop, not a real-time thread: running it at SCHED_FIFO (as root)
        // keeps it from repeating or dropping a quantum in the recording when the machine is busy.
        let command = [
            "/usr/bin/pw-record", "--target", sink, "-P", "{ stream.capture.sink=true node.name=\(node) }",
            "--rate", "48000", "--channels", "2", "--format", "f32", path,
        ]
        let realTime = getuid() == 0 ? ["/usr/bin/chrt", "-f", "40"] : []
        let recorder = try Running(
            URL(fileURLWithPath: (realTime + command)[0]), Array((realTime + command).dropFirst()),
            environment: environment)
        let linked = try TestSupport.waitUntil {
            try Self.execute(URL(fileURLWithPath: "/usr/bin/pw-link"), ["-l"], environment: environment).out.contains(
                "\(node):input_FL")
        }
        guard linked else {
            recorder.interrupt()
            throw TestSupport.ToolFailure(description: "pw-record did not link to the monitor of \(sink)")
        }
        return recorder
    }

    /// Plays a sound file with pw-play (the simplest PipeWire client, our peer) to `sink`.
    func play(_ path: String, sink: String, latency: Int) throws -> Running {
        try Running(
            URL(fileURLWithPath: "/usr/bin/pw-play"), ["--target", sink, "--latency", "\(latency)", path],
            environment: environment)
    }

    /// Starts graphhost, through `launcher` (a command and its arguments, e.g. prlimit) when one is given.
    func graphhost(_ arguments: [String], extraEnvironment: [String: String] = [:], launcher: [String] = []) throws
        -> Running
    {
        guard FileManager.default.isExecutableFile(atPath: TestSupport.executable.path) else {
            throw TestSupport.ToolFailure(
                description: "\(TestSupport.executable.path) is missing: build with scripts/test (it builds the tests)")
        }
        let environment = environment.merging(extraEnvironment) { $1 }
        guard let command = launcher.first else {
            return try Running(TestSupport.executable, arguments, environment: environment)
        }
        return try Running(
            URL(fileURLWithPath: command), Array(launcher.dropFirst()) + [TestSupport.executable.path] + arguments,
            environment: environment)
    }
}
