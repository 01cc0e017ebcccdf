import Foundation
import XCTest

@testable import GraphHost

/// The repository's paths, test media made on the fly (sox, lame), and helpers to run tools, `graphhost` and graphs
/// (sessions and offline renders).
enum TestSupport {
    /// The repository's root folder.
    /// A status for sessions that render offline: its playback counters stay zero (one set for the whole process).
    static func offlineStatus() -> PlaybackStatus {
        PlaybackStatus(counters: idleCounters, recorder: nil, sampleRate: 48000)
    }
    nonisolated(unsafe) private static let idleCounters = PlaybackCounters.create()

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../..")
        .standardizedFileURL
    /// The folder of the build the tests run from (scripts/test: the release build, tests included): the test bundle
    /// lies beside the products it tests.
    static let products = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent()
    /// The `graphhost` executable of the build the tests run from.
    static let executable = products.appendingPathComponent("graphhost")

    static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("graphhost-tests-\(getpid())")
        // `outputs/` holds what tests write (sockets, renders), whichever test runs first.
        try? FileManager.default.createDirectory(
            at: url.appendingPathComponent("outputs"), withIntermediateDirectories: true)
        return url
    }()

    struct ToolFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `executable` (in `directory` when given) and returns its exit status, standard output and standard error.
    static func execute(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil
    ) throws -> (status: Int32, out: Data, err: Data) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = directory }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, o, e)
    }

    /// Runs `graphhost` with `arguments`.
    static func graphhost(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let r = try execute(executable, arguments)
        return (r.status, String(decoding: r.out, as: UTF8.self), String(decoding: r.err, as: UTF8.self))
    }

    /// Runs a program found on PATH and returns its standard output; throws if it fails.
    @discardableResult
    static func run(_ arguments: [String]) throws -> Data {
        let result = try execute(URL(fileURLWithPath: "/usr/bin/env"), arguments)
        guard result.status == 0 else {
            throw ToolFailure(
                description:
                    "\(arguments.joined(separator: " ")) failed: \(String(decoding: result.err, as: UTF8.self))")
        }
        return result.out
    }

    /// A synthesized MP3 (chord plus noise burst), cached by its parameters.
    static func mp3(rate: Int, channels: Int, seconds: Double) throws -> String {
        let path = directory.appendingPathComponent("tone-\(rate)-\(channels)-\(seconds).mp3").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let wav = path + ".wav"
        try run([
            "sox", "-q", "-n", "-r", "\(rate)", "-c", "\(channels)", wav, "synth", "\(seconds)",
            "sine", "220-880", "pinknoise", "tremolo", "3", "60", "gain", "-n", "-3",
        ])
        try run(["lame", "--quiet", "-b", "160", wav, path])
        return path
    }

    /// A 1 kHz sine at -6 dBFS (stereo, 48 kHz, 320 kbit/s), for click measurements.
    static func sine(seconds: Double) throws -> String {
        let path = directory.appendingPathComponent("sine-1k-\(seconds).mp3").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let wav = path + ".wav"
        try run([
            "sox", "-q", "-n", "-r", "48000", "-c", "2", wav, "synth", "\(seconds)", "sine", "1000", "gain", "-n", "-6",
        ])
        try run(["lame", "--quiet", "-b", "320", wav, path])
        return path
    }

    /// A stereo 48 kHz 1 kHz sine of `amplitude` (linear, 1 = full scale) as 32-bit float WAV, so nothing rounds or
    /// clips it; `gate` (an ffmpeg expression of t, 1 or 0) cuts it.
    static func floatSine(amplitude: Double, seconds: Int, gate: String = "1") throws -> String {
        let name = "sine-1k-\(amplitude)-\(seconds)s-\(gate.filter { $0.isLetter || $0.isNumber }).wav"
        let path = directory.appendingPathComponent(name).path
        if FileManager.default.fileExists(atPath: path) { return path }
        let expression = "\(amplitude)*sin(2*PI*1000*t)*\(gate)"
        try run([
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
            "aevalsrc=\(expression)|\(expression):c=stereo:s=48000:d=\(seconds)", "-c:a", "pcm_f32le", path,
        ])
        return path
    }

    /// An MP3 of sine tones at `frequencies` (Hz), each at -12 dBFS, stereo at 48 kHz.
    static func tones(_ frequencies: [Int], seconds: Int = 3) throws -> String {
        let name = "tones-" + frequencies.map(String.init).joined(separator: "-") + (seconds == 3 ? "" : "-\(seconds)s")
        let path = TestSupport.directory.appendingPathComponent("\(name).mp3").path
        if FileManager.default.fileExists(atPath: path) { return path }
        var parts: [String] = []
        for f in frequencies {
            let part = TestSupport.directory.appendingPathComponent("\(name)-\(f).wav").path
            try TestSupport.run([
                "sox", "-q", "-n", "-r", "48000", "-c", "2", part, "synth", "\(seconds)", "sine", "\(f)", "gain", "-n",
                "-12",
            ])
            parts.append(part)
        }
        let wav = path + ".wav"
        try TestSupport.run(
            parts.count == 1
                ? ["cp", parts[0], wav]
                : ["sox", "-q", "-m", "-v", "1"] + parts.flatMap { [$0, "-v", "1"] }.dropLast(2) + [wav])
        try TestSupport.run(["lame", "--quiet", "-b", "320", wav, path])
        return path
    }

    /// A Standard MIDI File, format 0 at 120 bpm (480 ticks a quarter): A4 for half a second, then C5 for half a
    /// second.
    static func twoNotes() throws -> String {
        let path = TestSupport.directory.appendingPathComponent("two-notes.mid").path
        let track: [UInt8] = [
            0x00, 0x90, 69, 100, 0x83, 0x60, 0x80, 69, 0,
            0x00, 0x90, 72, 100, 0x83, 0x60, 0x80, 72, 0,
            0x00, 0xFF, 0x2F, 0x00,
        ]
        var bytes: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0]
        bytes += Array("MTrk".utf8) + [0, 0, 0, UInt8(track.count)] + track
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    /// An MP3 through an EQ with `preset`.
    static func eqGraph(preset: String) throws -> String {
        """
        { "nodes": [ { "id": "s", "type": "stream", \
        "url": "\(try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1))" },
                     { "id": "eq", "type": "ipod-eq", "preset": "\(preset)" }, { "id": "out", "type": "output" } ],
          "links": [ { "from": "s", "to": "eq" }, { "from": "eq", "to": "out" } ] }
        """
    }

    /// Writes a graph file next to the test media and returns its path.
    static func graph(_ json: String, name: String = UUID().uuidString) -> String {
        let path = directory.appendingPathComponent("\(name).json").path
        FileManager.default.createFile(atPath: path, contents: Data(json.utf8))
        return path
    }

    /// A graph that plays one MP3 straight to the output.
    static func streamGraph(_ mp3: String, rate: Int = 48000, channels: Int = 2) -> String {
        graph(
            """
            { "format": { "sampleRate": \(rate), "channels": \(channels) },
              "nodes": [ { "id": "s", "type": "stream", "url": "\(mp3)" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "out" } ] }
            """)
    }

    /// One MP3 decoded through the graph (no effects), interleaved.
    static func renderStream(_ mp3: String, channels: Int = 2) throws -> [Float] {
        try render(streamGraph(mp3, channels: channels)).samples
    }

    /// A session on the graph file at `path`, compiled for `nominalFrames` when given.
    static func session(_ path: String, nominalFrames: Int? = nil) throws -> GraphSession {
        try session(document: try GraphDocument.load(path: path), nominalFrames: nominalFrames)
    }

    /// A session on a loaded graph, compiled for `nominalFrames` when given.
    static func session(document: GraphDocument, nominalFrames: Int? = nil) throws -> GraphSession {
        GraphSession(graph: try CompiledGraph(document, nominalFrames: nominalFrames))
    }

    /// Renders a graph file offline and returns interleaved samples.
    static func render(
        _ path: String, durationFrames: Int? = nil, events: [TimedCommand] = [],
        frameSizes: [Int]? = nil
    ) throws -> (samples: [Float], summary: OfflineRenderer.Summary) {
        try render(
            document: try GraphDocument.load(path: path), durationFrames: durationFrames, events: events,
            frameSizes: frameSizes)
    }

    /// The graph at `path` rendered offline for `seconds` at 48 kHz, also written to a WAV named `name` (a peer such as
    /// pw-play plays it).
    static func renderedFile(_ path: String, seconds: Int, name: String) throws -> (samples: [Float], path: String) {
        let rendered = try render(path, durationFrames: seconds * 48000).samples
        let file = directory.appendingPathComponent(name).path
        let writer = try SoundFileWriter(path: file, sampleRate: 48000, channels: 2)
        try writer.write(rendered, frames: rendered.count / 2)
        writer.close()
        return (rendered, file)
    }

    /// Renders a loaded graph offline and returns interleaved samples.
    static func render(
        document: GraphDocument, durationFrames: Int? = nil, events: [TimedCommand] = [],
        frameSizes: [Int]? = nil
    ) throws -> (samples: [Float], summary: OfflineRenderer.Summary) {
        let session = try Self.session(document: document)
        defer { session.close() }
        let channels = session.format.channels
        var samples: [Float] = []
        let summary = try OfflineRenderer(session: session, events: events).render(
            durationFrames: durationFrames, frameSizes: frameSizes
        ) {
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
                if pair.count == 2 {
                    result[String(pair[0])] = String(pair[1]).trimmingCharacters(in: CharacterSet(charactersIn: "'\""))
                }
            }
        }
        return result
    }

    static func peak(_ samples: [Float]) -> Float { samples.reduce(0) { max($0, abs($1)) } }

    /// Waits until `condition` holds, looking every `every` seconds, for at most `timeout` seconds; returns whether it
    /// held. Tests wait on events and counters this way, with a generous timeout, never on a fixed sleep.
    @discardableResult
    static func waitUntil(
        timeout: TimeInterval = 30, every: TimeInterval = 0.01, _ condition: () throws -> Bool
    ) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if try condition() { return true }
            if Date() >= deadline { return false }
            usleep(useconds_t(every * 1e6))
        }
    }
}
