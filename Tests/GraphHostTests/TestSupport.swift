import Foundation
import XCTest
@testable import GraphHost

/// Test media made on the fly with sox and lame, and small helpers to run tools and graphs.
enum TestSupport {
    static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("graphhost-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    struct ToolFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `executable` and returns its exit status, standard output and standard error.
    static func execute(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, out: Data, err: Data) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, o, e)
    }

    /// Runs a program found on PATH and returns its standard output; throws if it fails.
    @discardableResult
    static func run(_ arguments: [String]) throws -> Data {
        let result = try execute(URL(fileURLWithPath: "/usr/bin/env"), arguments)
        guard result.status == 0 else {
            throw ToolFailure(description: "\(arguments.joined(separator: " ")) failed: \(String(decoding: result.err, as: UTF8.self))")
        }
        return result.out
    }

    /// A synthesized MP3 (chord plus noise burst), cached by its parameters.
    static func mp3(rate: Int, channels: Int, seconds: Double) throws -> String {
        let path = directory.appendingPathComponent("tone-\(rate)-\(channels)-\(seconds).mp3").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let wav = path + ".wav"
        try run(["sox", "-q", "-n", "-r", "\(rate)", "-c", "\(channels)", wav, "synth", "\(seconds)",
                 "sine", "220-880", "pinknoise", "tremolo", "3", "60", "gain", "-n", "-3"])
        try run(["lame", "--quiet", "-b", "160", wav, path])
        return path
    }

    /// A 1 kHz sine at -6 dBFS (stereo, 48 kHz, 320 kbit/s), for click measurements.
    static func sine(seconds: Double) throws -> String {
        let path = directory.appendingPathComponent("sine-1k-\(seconds).mp3").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let wav = path + ".wav"
        try run(["sox", "-q", "-n", "-r", "48000", "-c", "2", wav, "synth", "\(seconds)", "sine", "1000", "gain", "-n", "-6"])
        try run(["lame", "--quiet", "-b", "320", wav, path])
        return path
    }

    /// Writes a graph file next to the test media and returns its path.
    static func graph(_ json: String, name: String = UUID().uuidString) -> String {
        let path = directory.appendingPathComponent("\(name).json").path
        FileManager.default.createFile(atPath: path, contents: Data(json.utf8))
        return path
    }

    /// A graph that plays one MP3 straight to the output.
    static func streamGraph(_ mp3: String, rate: Int = 48000, channels: Int = 2) -> String {
        graph("""
        { "format": { "sampleRate": \(rate), "channels": \(channels) },
          "nodes": [ { "id": "s", "type": "stream", "url": "\(mp3)" }, { "id": "out", "type": "output" } ],
          "links": [ { "from": "s", "to": "out" } ] }
        """)
    }

    /// One MP3 decoded through the graph (no effects), interleaved.
    static func renderStream(_ mp3: String, channels: Int = 2) throws -> [Float] {
        try render(streamGraph(mp3, channels: channels)).samples
    }

    /// Renders a graph file offline and returns interleaved samples.
    static func render(_ path: String, durationFrames: Int? = nil, events: [TimedCommand] = [],
                       frameSizes: [Int]? = nil) throws -> (samples: [Float], summary: OfflineRenderer.Summary) {
        try render(document: try GraphDocument.load(path: path), durationFrames: durationFrames, events: events, frameSizes: frameSizes)
    }

    /// Renders a loaded graph offline and returns interleaved samples.
    static func render(document: GraphDocument, durationFrames: Int? = nil, events: [TimedCommand] = [],
                       frameSizes: [Int]? = nil) throws -> (samples: [Float], summary: OfflineRenderer.Summary) {
        let session = GraphSession(graph: try CompiledGraph(document))
        defer { session.close() }
        let channels = session.format.channels
        var samples: [Float] = []
        let summary = try OfflineRenderer(session: session, events: events).render(durationFrames: durationFrames, frameSizes: frameSizes) {
            samples.append(contentsOf: UnsafeBufferPointer(start: $0, count: $1 * channels))
        }
        return (samples, summary)
    }

    /// The variables of `export NAME=VALUE ...` lines a start script prints (quotes around values removed).
    static func exports(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("export ") {
            for word in line.dropFirst(7).split(separator: " ") {
                let pair = word.split(separator: "=", maxSplits: 1)
                if pair.count == 2 { result[String(pair[0])] = String(pair[1]).trimmingCharacters(in: CharacterSet(charactersIn: "'\"")) }
            }
        }
        return result
    }

    static func peak(_ samples: [Float]) -> Float { samples.reduce(0) { max($0, abs($1)) } }

    /// Waits until `condition` holds, looking every 10 ms, for at most `timeout` seconds; returns whether it held.
    /// Tests wait on events and counters this way, with a generous timeout, never on a fixed sleep.
    @discardableResult
    static func waitUntil(timeout: TimeInterval = 30, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if try condition() { return true }
            if Date() >= deadline { return false }
            usleep(10_000)
        }
    }
}
