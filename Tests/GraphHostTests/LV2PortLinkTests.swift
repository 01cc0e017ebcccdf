import Foundation
import XCTest
@testable import GraphHost

/// Plugins with more audio ports than the bus has channels, linked by port name: a crossover's bands to different
/// paths, a plugin's extra inputs fed from another stream as a stereo pair.
final class LV2PortLinkTests: XCTestCase {
    /// An MP3 of sine tones at `frequencies` (Hz), each at -12 dBFS, stereo at 48 kHz.
    static func tones(_ frequencies: [Int], seconds: Int = 3) throws -> String {
        let name = "tones-" + frequencies.map(String.init).joined(separator: "-") + (seconds == 3 ? "" : "-\(seconds)s")
        let path = TestSupport.directory.appendingPathComponent("\(name).mp3").path
        if FileManager.default.fileExists(atPath: path) { return path }
        var parts: [String] = []
        for f in frequencies {
            let part = TestSupport.directory.appendingPathComponent("\(name)-\(f).wav").path
            try TestSupport.run(["sox", "-q", "-n", "-r", "48000", "-c", "2", part, "synth", "\(seconds)", "sine", "\(f)", "gain", "-n", "-12"])
            parts.append(part)
        }
        let wav = path + ".wav"
        try TestSupport.run(parts.count == 1 ? ["cp", parts[0], wav] : ["sox", "-q", "-m", "-v", "1"] + parts.flatMap { [$0, "-v", "1"] }.dropLast(2) + [wav])
        try TestSupport.run(["lame", "--quiet", "-b", "320", wav, path])
        return path
    }

    /// The amplitude of the `frequency` component of `channel` of interleaved stereo at 48 kHz, over `seconds` from
    /// `start` (whole periods of the test tones).
    static func amplitude(_ stereo: [Float], _ frequency: Double, channel: Int = 0, start: Double = 1, seconds: Double = 1,
                          rate: Double = 48000) -> Double {
        var re = 0.0, im = 0.0
        let from = Int(start * rate), count = Int(seconds * rate)
        for n in 0..<count {
            let phase = 2 * Double.pi * frequency * Double(n) / rate
            re += Double(stereo[2 * (from + n) + channel]) * cos(phase)
            im += Double(stereo[2 * (from + n) + channel]) * sin(phase)
        }
        return 2 * (re * re + im * im).squareRoot() / Double(count)
    }

    static func dB(_ x: Double) -> Double { 20 * log10(max(x, 1e-12)) }

    /// swh bwxover_iir splits a mono input into a low and a high band on two output ports. Linked by port name, the
    /// bands reach different paths: each alone at the output holds its own tone, and in a mixer with the high band
    /// at half volume the high tone is 6 dB down while the low one is untouched.
    func testACrossoversBandsGoToDifferentPathsByPortName() throws {
        let music = try Self.tones([100, 6000])
        func graph(_ links: String, mixer: Bool = false) -> String {
            TestSupport.graph("""
            { "nodes": [ { "id": "music", "type": "stream", "url": "\(music)" },
                         { "id": "xover", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/bwxover_iir", "controls": { "cutoff": 1000 } },
                         \(mixer ? #"{ "id": "mix", "type": "mixer", "inputs": 2, "volumes": [1, 0.5] },"# : "")
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "music", "to": "xover" }, \(links) ] }
            """)
        }
        let input = try TestSupport.render(graph(#"{ "from": "music", "to": "out" }"#), durationFrames: 3 * 48000).samples
        let low = try TestSupport.render(graph(#"{ "from": "xover:lpoutput", "to": "out" }"#), durationFrames: 3 * 48000).samples
        let high = try TestSupport.render(graph(#"{ "from": "xover:hpoutput", "to": "out" }"#), durationFrames: 3 * 48000).samples
        let (in100, in6k) = (Self.amplitude(input, 100), Self.amplitude(input, 6000))
        XCTAssertEqual(Self.dB(Self.amplitude(low, 100) / in100), 0, accuracy: 1, "the low band lost its tone")
        XCTAssertLessThan(Self.dB(Self.amplitude(low, 6000) / in6k), -20, "the low band passes the high tone")
        XCTAssertEqual(Self.dB(Self.amplitude(high, 6000) / in6k), 0, accuracy: 1, "the high band lost its tone")
        XCTAssertLessThan(Self.dB(Self.amplitude(high, 100) / in100), -20, "the high band passes the low tone")
        // The right channel carries the same band (one port fills every channel).
        XCTAssertEqual(Array(stride(from: 0, to: low.count, by: 2).map { low[$0] }), Array(stride(from: 1, to: low.count, by: 2).map { low[$0] }))

        let both = graph(#"{ "from": "xover:lpoutput", "to": "mix:0" }, { "from": "xover:hpoutput", "to": "mix:1" }, { "from": "mix", "to": "out" }"#, mixer: true)
        let mixed = try TestSupport.render(both, durationFrames: 3 * 48000).samples
        XCTAssertEqual(Self.dB(Self.amplitude(mixed, 100) / in100), 0, accuracy: 1)
        XCTAssertEqual(Self.dB(Self.amplitude(mixed, 6000) / in6k), -6, accuracy: 1)
        let document = try GraphDocument.load(path: both)
        XCTAssertTrue(GraphPrinter.text(document).contains("xover:hpoutput -> mix:1"), GraphPrinter.text(document))
        XCTAssertTrue(GraphPrinter.dot(document).contains("\"hpoutput→1\""), GraphPrinter.dot(document))
        XCTAssertThrowsError(try GraphDocument.load(path: graph(#"{ "from": "xover:bass", "to": "out" }"#))) {
            XCTAssertTrue("\($0)".contains("'xover:bass': it has no such output port; ports to link by name: lpoutput, hpoutput"), "\($0)")
        }
    }

    /// An MP3 with a `left` tone on the left channel and a `right` tone on the right, each at -12 dBFS.
    static func stereoTones(left: Int, right: Int, seconds: Int = 3) throws -> String {
        let path = TestSupport.directory.appendingPathComponent("stereo-\(left)-\(right).mp3").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let l = path + ".l.wav", r = path + ".r.wav", wav = path + ".wav"
        try TestSupport.run(["sox", "-q", "-n", "-r", "48000", "-c", "1", l, "synth", "\(seconds)", "sine", "\(left)", "gain", "-n", "-12"])
        try TestSupport.run(["sox", "-q", "-n", "-r", "48000", "-c", "1", r, "synth", "\(seconds)", "sine", "\(right)", "gain", "-n", "-12"])
        try TestSupport.run(["sox", "-q", "-M", l, r, wav])
        try TestSupport.run(["lame", "--quiet", "-b", "320", wav, path])
        return path
    }

    /// swh xfade4 has two stereo inputs (A, B) and two stereo outputs; at `xfade` 0 each output carries its input at
    /// -6 dB. On a stereo bus A is the main pair; B comes in from a second stream and goes out to its own path, each in
    /// one link naming the pair (`"to": "x:inputLB,inputRB"`, `"from": "x:outputLB,outputRB"`), channel i to port i.
    func testAStereoPairOfPortsGoesInAndOutInOneLink() throws {
        let a = try Self.tones([1000]), b = try Self.stereoTones(left: 300, right: 500)
        func graph(_ input: String?, _ output: String) -> String {
            TestSupport.graph("""
            { "nodes": [ { "id": "a", "type": "stream", "url": "\(a)" }, { "id": "b", "type": "stream", "url": "\(b)" },
                         { "id": "x", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/xfade4", "controls": { "xfade": 0 } },
                         { "id": "spare", "type": "mixer", "inputs": 1 }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "a", "to": "x" }, { "from": "b", "to": "\(input ?? "spare")" }, { "from": "\(output)", "to": "out" } ] }
            """)
        }
        let main = try TestSupport.render(graph("x:inputLB,inputRB", "x"), durationFrames: 3 * 48000).samples
        XCTAssertEqual(Self.dB(Self.amplitude(main, 1000)), -18, accuracy: 0.5)
        XCTAssertLessThan(Self.dB(Self.amplitude(main, 300)), -80)
        let pair = try TestSupport.render(graph("x:inputLB,inputRB", "x:outputLB,outputRB"), durationFrames: 3 * 48000).samples
        XCTAssertEqual(Self.dB(Self.amplitude(pair, 300)), -18, accuracy: 0.5, "the left of the pair")
        XCTAssertEqual(Self.dB(Self.amplitude(pair, 500, channel: 1)), -18, accuracy: 0.5, "the right of the pair")
        XCTAssertLessThan(Self.dB(Self.amplitude(pair, 500)), -80, "the pair's channels are swapped or mixed")
        XCTAssertLessThan(Self.dB(Self.amplitude(pair, 1000)), -80)
        // Loaded live (the new graph links more ports, so its plugin is a new instance), the output crosses over to B.
        let swapped = try TestSupport.render(graph("x:inputLB,inputRB", "x"), durationFrames: 3 * 48000,
                                             events: [TimedCommand(frame: 24000, request: .load(path: graph("x:inputLB,inputRB", "x:outputLB,outputRB")))]).samples
        XCTAssertEqual(Self.dB(Self.amplitude(swapped, 300)), -18, accuracy: 0.5, "the loaded graph's output is not B")
        XCTAssertTrue(swapped.allSatisfy { $0.isFinite && abs($0) < 0.3 })
        let unlinkedPath = graph(nil, "x:outputLB,outputRB")
        XCTAssertLessThan(Self.dB(Self.amplitude(try TestSupport.render(unlinkedPath, durationFrames: 3 * 48000).samples, 300)), -80)
        let unlinked = try GraphDocument.load(path: unlinkedPath)
        for port in ["inputLB", "inputRB"] {
            XCTAssertTrue(unlinked.warnings.contains { "\($0)".contains("audio input '\(port)' of 'x' is not linked and reads silence") }, "\(unlinked.warnings)")
        }
        XCTAssertTrue(GraphPrinter.text(try GraphDocument.load(path: graph("x:inputLB,inputRB", "x"))).contains("b:0 -> x:inputRB"))
        let withChannel = TestSupport.graph(try String(contentsOfFile: graph("x:inputLB,inputRB", "x"), encoding: .utf8)
            .replacingOccurrences(of: #""to": "x:inputLB,inputRB""#, with: #""to": "x:inputLB,inputRB", "channel": 1"#))
        XCTAssertThrowsError(try GraphDocument.load(path: withChannel)) {
            XCTAssertTrue("\($0)".contains("\"channel\" picks the source channel for a link to one port; 'x:inputLB,inputRB' names 2"), "\($0)")
        }
    }
}
