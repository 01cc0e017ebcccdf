import Foundation
import XCTest

@testable import GraphHost

/// Plugins with more audio ports than the bus has channels, linked by port name: a crossover's bands to different
/// paths, a plugin's extra inputs fed from another stream as a stereo pair.
final class LV2PortLinkTests: XCTestCase {
    /// swh bwxover_iir splits a mono input into a low and a high band on two output ports. Linked by port name, the
    /// bands reach different paths: each alone at the output holds its own tone, and in a mixer with the high band
    /// at half volume the high tone is 6 dB down while the low one is untouched.
    func testACrossoversBandsGoToDifferentPathsByPortName() throws {
        let music = try TestSupport.tones([100, 6000])
        func graph(_ links: String, mixer: Bool = false) -> String {
            TestSupport.graph(
                """
                { "nodes": [ { "id": "music", "type": "stream", "url": "\(music)" },
                             { "id": "xover", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/bwxover_iir", \
                "controls": { "cutoff": 1000 } },
                             \(mixer ? #"{ "id": "mix", "type": "mixer", "inputs": 2, "volumes": [1, 0.5] },"# : "")
                             { "id": "out", "type": "output" } ],
                  "links": [ { "from": "music", "to": "xover" }, \(links) ] }
                """)
        }
        let input = try TestSupport.render(graph(#"{ "from": "music", "to": "out" }"#), durationFrames: 3 * 48000)
            .samples
        let low = try TestSupport.render(
            graph(#"{ "from": "xover:lpoutput", "to": "out" }"#), durationFrames: 3 * 48000
        ).samples
        let high = try TestSupport.render(
            graph(#"{ "from": "xover:hpoutput", "to": "out" }"#), durationFrames: 3 * 48000
        ).samples
        let (in100, in6k) = (ToneMeasure.amplitude(input, 100), ToneMeasure.amplitude(input, 6000))
        XCTAssertEqual(
            ToneMeasure.dB(ToneMeasure.amplitude(low, 100) / in100), 0, accuracy: 1, "the low band lost its tone")
        XCTAssertLessThan(
            ToneMeasure.dB(ToneMeasure.amplitude(low, 6000) / in6k), -20, "the low band passes the high tone")
        XCTAssertEqual(
            ToneMeasure.dB(ToneMeasure.amplitude(high, 6000) / in6k), 0, accuracy: 1, "the high band lost its tone")
        XCTAssertLessThan(
            ToneMeasure.dB(ToneMeasure.amplitude(high, 100) / in100), -20, "the high band passes the low tone")
        // The right channel carries the same band (one port fills every channel).
        XCTAssertEqual(
            Array(stride(from: 0, to: low.count, by: 2).map { low[$0] }),
            Array(stride(from: 1, to: low.count, by: 2).map { low[$0] }))

        let both = graph(
            #"{ "from": "xover:lpoutput", "to": "mix:0" }, { "from": "xover:hpoutput", "to": "mix:1" }, "#
                + #"{ "from": "mix", "to": "out" }"#,
            mixer: true)
        let mixed = try TestSupport.render(both, durationFrames: 3 * 48000).samples
        XCTAssertEqual(ToneMeasure.dB(ToneMeasure.amplitude(mixed, 100) / in100), 0, accuracy: 1)
        XCTAssertEqual(ToneMeasure.dB(ToneMeasure.amplitude(mixed, 6000) / in6k), -6, accuracy: 1)
        let document = try GraphDocument.load(path: both)
        XCTAssertTrue(GraphPrinter.text(document).contains("xover:hpoutput -> mix:1"), GraphPrinter.text(document))
        XCTAssertTrue(GraphPrinter.dot(document).contains("\"hpoutput→1\""), GraphPrinter.dot(document))
        XCTAssertThrowsError(try GraphDocument.load(path: graph(#"{ "from": "xover:bass", "to": "out" }"#))) {
            XCTAssertTrue(
                "\($0)".contains("'xover:bass': it has no such output port; ports to link by name: lpoutput, hpoutput"),
                "\($0)")
        }
    }

    /// An MP3 with a `left` tone on the left channel and a `right` tone on the right, each at -12 dBFS.
    static func stereoTones(left: Int, right: Int, seconds: Int = 3) throws -> String {
        let path = TestSupport.directory.appendingPathComponent("stereo-\(left)-\(right).mp3").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let l = path + ".l.wav"
        let r = path + ".r.wav"
        let wav = path + ".wav"
        try TestSupport.run([
            "sox", "-q", "-n", "-r", "48000", "-c", "1", l, "synth", "\(seconds)", "sine", "\(left)", "gain", "-n",
            "-12",
        ])
        try TestSupport.run([
            "sox", "-q", "-n", "-r", "48000", "-c", "1", r, "synth", "\(seconds)", "sine", "\(right)", "gain", "-n",
            "-12",
        ])
        try TestSupport.run(["sox", "-q", "-M", l, r, wav])
        try TestSupport.run(["lame", "--quiet", "-b", "320", wav, path])
        return path
    }

    /// swh xfade4 has two stereo inputs (A, B) and two stereo outputs; at `xfade` 0 each output carries its input at
    /// -6 dB. On a stereo bus A is the main pair; B comes in from a second stream and goes out to its own path, each in
    /// one link naming the pair (`"to": "x:inputLB,inputRB"`, `"from": "x:outputLB,outputRB"`), channel i to port i.
    func testAStereoPairOfPortsGoesInAndOutInOneLink() throws {
        let a = try TestSupport.tones([1000])
        let b = try Self.stereoTones(left: 300, right: 500)
        func graph(_ input: String?, _ output: String) -> String {
            TestSupport.graph(
                """
                { "nodes": [ { "id": "a", "type": "stream", "url": "\(a)" }, \
                { "id": "b", "type": "stream", "url": "\(b)" },
                             { "id": "x", "type": "lv2", "uri": "http://plugin.org.uk/swh-plugins/xfade4", \
                "controls": { "xfade": 0 } },
                             { "id": "spare", "type": "mixer", "inputs": 1 }, { "id": "out", "type": "output" } ],
                  "links": [ { "from": "a", "to": "x" }, { "from": "b", "to": "\(input ?? "spare")" }, \
                { "from": "\(output)", "to": "out" } ] }
                """)
        }
        let main = try TestSupport.render(graph("x:inputLB,inputRB", "x"), durationFrames: 3 * 48000).samples
        XCTAssertEqual(ToneMeasure.dB(ToneMeasure.amplitude(main, 1000)), -18, accuracy: 0.5)
        XCTAssertLessThan(ToneMeasure.dB(ToneMeasure.amplitude(main, 300)), -80)
        let pair = try TestSupport.render(graph("x:inputLB,inputRB", "x:outputLB,outputRB"), durationFrames: 3 * 48000)
            .samples
        XCTAssertEqual(ToneMeasure.dB(ToneMeasure.amplitude(pair, 300)), -18, accuracy: 0.5, "the left of the pair")
        XCTAssertEqual(
            ToneMeasure.dB(ToneMeasure.amplitude(pair, 500, channel: 1)), -18, accuracy: 0.5, "the right of the pair")
        XCTAssertLessThan(
            ToneMeasure.dB(ToneMeasure.amplitude(pair, 500)), -80, "the pair's channels are swapped or mixed")
        XCTAssertLessThan(ToneMeasure.dB(ToneMeasure.amplitude(pair, 1000)), -80)
        // Loaded live (the new graph links more ports, so its plugin is a new instance), the output crosses over to B.
        let swapped = try TestSupport.render(
            graph("x:inputLB,inputRB", "x"), durationFrames: 3 * 48000,
            events: [
                TimedCommand(frame: 24000, request: .load(path: graph("x:inputLB,inputRB", "x:outputLB,outputRB")))
            ]
        ).samples
        XCTAssertEqual(
            ToneMeasure.dB(ToneMeasure.amplitude(swapped, 300)), -18, accuracy: 0.5,
            "the loaded graph's output is not B")
        XCTAssertTrue(swapped.allSatisfy { $0.isFinite && abs($0) < 0.3 })
        let unlinkedPath = graph(nil, "x:outputLB,outputRB")
        XCTAssertLessThan(
            ToneMeasure.dB(
                ToneMeasure.amplitude(try TestSupport.render(unlinkedPath, durationFrames: 3 * 48000).samples, 300)),
            -80)
        let unlinked = try GraphDocument.load(path: unlinkedPath)
        for port in ["inputLB", "inputRB"] {
            XCTAssertTrue(
                unlinked.warnings.contains {
                    "\($0)".contains("audio input '\(port)' of 'x' is not linked and reads silence")
                }, "\(unlinked.warnings)")
        }
        XCTAssertTrue(
            GraphPrinter.text(try GraphDocument.load(path: graph("x:inputLB,inputRB", "x"))).contains(
                "b:0 -> x:inputRB"))
        let withChannel = TestSupport.graph(
            try String(contentsOfFile: graph("x:inputLB,inputRB", "x"), encoding: .utf8)
                .replacingOccurrences(
                    of: #""to": "x:inputLB,inputRB""#, with: #""to": "x:inputLB,inputRB", "channel": 1"#))
        XCTAssertThrowsError(try GraphDocument.load(path: withChannel)) {
            XCTAssertTrue(
                "\($0)".contains(
                    "\"channel\" picks the source channel for a link to one port; 'x:inputLB,inputRB' names 2"), "\($0)"
            )
        }
    }
}
