import Foundation
import XCTest
@testable import GraphHost

/// A private PipeWire daemon (scripts/pipewire-headless) for one test, and helpers to play and record through it.
final class HeadlessPipeWire {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL
    static let script = root.appendingPathComponent("scripts/pipewire-headless")
    let directory: String
    let environment: [String: String]

    /// Starts a daemon (quantum forced when given); throws, so the test fails, when it cannot start.
    init(quantum: Int? = nil, directory: String? = nil) throws {
        var env = ProcessInfo.processInfo.environment
        if let quantum { env["PW_QUANTUM"] = "\(quantum)" }
        let result = try Self.execute(Self.script, ["start"] + (directory.map { [$0] } ?? []), environment: env)
        guard result.status == 0 else {
            throw TestSupport.ToolFailure(description: "pipewire-headless start failed: \(result.err)")
        }
        let exports = TestSupport.exports(result.out)
        guard let dir = exports["PW_TEST_DIR"] else { throw TestSupport.ToolFailure(description: "no PW_TEST_DIR in: \(result.out)") }
        self.directory = dir
        environment = ProcessInfo.processInfo.environment.merging(exports) { $1 }
    }

    func stop() {
        _ = try? Self.execute(Self.script, ["stop", directory], environment: environment)
    }

    func script(_ arguments: [String]) throws -> String {
        let r = try Self.execute(Self.script, arguments, environment: environment)
        guard r.status == 0 else { throw TestSupport.ToolFailure(description: "pipewire-headless \(arguments): \(r.err)") }
        return r.out
    }

    static func execute(_ executable: URL, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, out: String, err: String) {
        let r = try TestSupport.execute(executable, arguments, environment: environment)
        return (r.status, String(decoding: r.out, as: UTF8.self), String(decoding: r.err, as: UTF8.self))
    }

    /// A started process with its output collected into files.
    final class Running {
        let process = Process()
        let outURL: URL, errURL: URL
        init(_ executable: URL, _ arguments: [String], environment: [String: String]) throws {
            outURL = TestSupport.directory.appendingPathComponent(UUID().uuidString + ".out")
            errURL = TestSupport.directory.appendingPathComponent(UUID().uuidString + ".err")
            FileManager.default.createFile(atPath: outURL.path, contents: nil)
            FileManager.default.createFile(atPath: errURL.path, contents: nil)
            process.executableURL = executable
            process.arguments = arguments
            process.environment = environment
            process.standardOutput = try FileHandle(forWritingTo: outURL)
            process.standardError = try FileHandle(forWritingTo: errURL)
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }
        /// Waits for the process; one still running after `timeout` seconds is killed (and reported as status -9).
        func wait(timeout: TimeInterval = 60) -> (status: Int32, out: String, err: String) {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return (-9, (try? String(contentsOf: outURL, encoding: .utf8)) ?? "", "killed after \(timeout) s: " + ((try? String(contentsOf: errURL, encoding: .utf8)) ?? ""))
            }
            process.waitUntilExit()
            return (process.terminationStatus, (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
                    (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
        }
        func interrupt() { process.interrupt() }
    }

    /// Starts pw-record on the null sink's monitor (32-bit float) and waits until it is linked.
    func record(to path: String) throws -> Running {
        // pw-record handles its buffers on its main loop, not a real-time thread: running it at SCHED_FIFO (as root)
        // keeps it from repeating or dropping a quantum in the recording when the machine is busy.
        let command = ["/usr/bin/pw-record", "--target", environment["PW_TEST_SINK"] ?? "graphhost_test_sink",
                       "-P", "{ stream.capture.sink=true node.name=graphhost_test_rec }",
                       "--rate", "48000", "--channels", "2", "--format", "f32", path]
        let realTime = getuid() == 0 ? ["/usr/bin/chrt", "-f", "40"] : []
        let recorder = try Running(URL(fileURLWithPath: (realTime + command)[0]), Array((realTime + command).dropFirst()), environment: environment)
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            let links = try Self.execute(URL(fileURLWithPath: "/usr/bin/pw-link"), ["-l"], environment: environment).out
            if links.contains("graphhost_test_rec:input_FL") { return recorder }
            usleep(20_000)
        }
        recorder.interrupt()
        throw TestSupport.ToolFailure(description: "pw-record did not link to the sink monitor")
    }

    /// The release graphhost binary (built by scripts/test before the tests).
    static var graphhost: URL {
        root.appendingPathComponent(".build/release/graphhost")
    }

    func graphhost(_ arguments: [String], extraEnvironment: [String: String] = [:]) throws -> Running {
        guard FileManager.default.isExecutableFile(atPath: Self.graphhost.path) else {
            throw TestSupport.ToolFailure(description: "\(Self.graphhost.path) is missing: build it with `swift build -c release` (scripts/test does)")
        }
        return try Running(Self.graphhost, arguments, environment: environment.merging(extraEnvironment) { $1 })
    }
}

/// Signal analysis for comparing a recording with a reference.
enum SignalMatch {
    /// Mono mixdown of interleaved stereo.
    static func mono(_ x: [Float]) -> [Float] { stride(from: 0, to: x.count - 1, by: 2).map { (x[$0] + x[$0 + 1]) / 2 } }

    static func firstSound(_ x: [Float], threshold: Float = 1e-3) -> Int? { x.firstIndex { abs($0) > threshold } }

    /// Normalized correlation of `a` at offset `lagA` with `b`, over `count` samples.
    static func correlation(_ a: [Float], _ lagA: Int, _ b: [Float], count: Int) -> Double {
        var ab = 0.0, aa = 0.0, bb = 0.0
        for i in 0..<count {
            let x = Double(a[lagA + i]), y = Double(b[i])
            ab += x * y; aa += x * x; bb += y * y
        }
        return ab / max((aa * bb).squareRoot(), 1e-30)
    }

    /// Aligns `recording` to `reference` (onset estimate, refined by correlation over ±2000 samples)
    /// and returns the lag and the normalized correlation over the whole overlap.
    static func align(recording: [Float], reference: [Float], trimEnd: Int) -> (lag: Int, correlation: Double)? {
        guard let r0 = firstSound(recording), let f0 = firstSound(reference) else { return nil }
        var best = (lag: 0, c: -2.0)
        let window = min(48000, reference.count - f0 - 1)
        for lag in (r0 - f0 - 2000)...(r0 - f0 + 2000) where lag >= 0 && lag + f0 + window < recording.count {
            let c = correlation(recording, lag + f0, Array(reference[f0..<(f0 + window)]), count: window)
            if c > best.c { best = (lag, c) }
        }
        let overlap = min(recording.count - best.lag, reference.count) - trimEnd
        guard overlap > 48000 else { return nil }
        return (best.lag, correlation(recording, best.lag, Array(reference[0..<overlap]), count: overlap))
    }
}
