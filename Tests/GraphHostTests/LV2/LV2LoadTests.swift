import Foundation
import XCTest

@testable import GraphHost

/// The DSP load of a chain of Debian plugins, swh amp once and mda Detune four times in series, rendered offline by the
/// release binary (`render --load`): the per-node figures rank Detune above amp, as `bench-kernel --lv2` does, and add
/// up to the render call's time.
final class LV2LoadTests: XCTestCase {
    /// The graph: a stream, amp, four Detunes and the output.
    static func ampAndDetunes() throws -> String {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 20)
        let detunes = (1...4).map {
            #"{ "id": "detune\#($0)", "type": "lv2", "uri": "http://drobilla.net/plugins/mda/Detune" }"#
        }
        let chain = ["s", "amp"] + (1...4).map { "detune\($0)" } + ["out"]
        let links = zip(chain, chain.dropFirst()).map { #"{ "from": "\#($0)", "to": "\#($1)" }"# }
        return TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(mp3)" },
                { "id": "amp", "type": "lv2", "uri": "\(TestPlugins.amp)", "controls": { "gain": -6 } },
                \(detunes.joined(separator: ", ")), { "id": "out", "type": "output" } ],
              "links": [ \(links.joined(separator: ", ")) ] }
            """)
    }

    /// Each node's (and the call's, and the nodes' sum's) average and median in µs from `render --load`'s lines.
    static func figures(_ text: String) -> [String: (average: Double, median: Double)] {
        var result: [String: (average: Double, median: Double)] = [:]
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard words.count >= 3, words[1] == "avg", let average = Double(words[2]) else { continue }
            let median = words.firstIndex(of: "p50").flatMap { Double(words[$0 + 1]) } ?? .nan
            result[String(words[0])] = (average, median)
        }
        return result
    }

    func testRenderLoadRanksDetuneAboveAmpAndTheNodesAddUpToTheCall() throws {
        let graph = try Self.ampAndDetunes()
        let output = TestSupport.directory.appendingPathComponent("detunes.wav").path
        let result = try TestSupport.execute(
            TestSupport.executable, ["render", graph, "-o", output, "--block", "256", "--load"])
        let text = String(decoding: result.out, as: UTF8.self)
        print(text)
        XCTAssertEqual(result.status, 0, String(decoding: result.err, as: UTF8.self))
        let figures = Self.figures(text)
        let amp = try XCTUnwrap(figures["amp"], text)
        let call = try XCTUnwrap(figures["callback"], text)
        for k in 1...4 {
            let detune = try XCTUnwrap(figures["detune\(k)"], text)
            // The median, not the average: one preemption of the offline thread can add milliseconds to any node.
            XCTAssertGreaterThan(detune.median, amp.median, "detune\(k) vs amp:\n\(text)")
        }
        let nodes = ["s", "amp", "detune1", "detune2", "detune3", "detune4", "out"]
        XCTAssertEqual(Set(figures.keys), Set(nodes + ["callback", "nodes"]), text)
        let sum = nodes.reduce(0) { $0 + (figures[$1]?.average ?? .nan) }
        XCTAssertEqual(sum, call.average, accuracy: 0.1 * call.average, "the nodes' sum against the call:\n\(text)")
    }
}
