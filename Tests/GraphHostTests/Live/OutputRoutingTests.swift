import Foundation
import XCTest

@testable import GraphHost

/// A `load` that changes where an output plays takes effect while running: an output sent as RTP to one port is sent
/// to another (PipeWire's RTP sink for the old one unloaded, one for the new loaded), then played to a named sink.
final class OutputRoutingTests: XCTestCase {
    func testALoadMovesAnOutputsRTPSessionAndTarget() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        try pw.addSink(HeadlessPipeWire.peerSink)
        let tone = try TestSupport.sine(seconds: 40)
        func graph(_ output: String) -> String {
            TestSupport.graph(
                """
                { "format": { "sampleRate": 48000, "channels": 2 },
                  "nodes": [ { "id": "song", "type": "stream", "url": "\(tone)", "loop": true },
                             { "id": "out", "type": "output", \(output) } ],
                  "links": [ { "from": "song", "to": "out" } ] }
                """)
        }
        let first = try UDPRelay.freePort()
        let second = try UDPRelay.freePort()
        let socket = TestSupport.directory.appendingPathComponent("live/routing.sock").path
        let run = try pw.graphhost([
            "run", graph(#""rtp": "rtp://127.0.0.1:\#(first)""#), "--name", "routing", "--socket", socket,
            "--latency", "256",
        ])
        defer { run.interrupt() }
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try TestSupport.waitUntil { try pw.hasNode("graphhost-rtp-127.0.0.1-\(first)") })
        func destinations() throws -> [String] {
            ((try control.status()["rtpOutputs"] as? [[String: Any]]) ?? []).compactMap { $0["destination"] as? String }
        }
        XCTAssertEqual(try destinations(), ["127.0.0.1:\(first)"])

        XCTAssertEqual(try control.ctl(["load", graph(#""rtp": "rtp://127.0.0.1:\#(second)""#)]).status, 0)
        XCTAssertTrue(
            try TestSupport.waitUntil {
                try pw.hasNode("graphhost-rtp-127.0.0.1-\(second)") && !pw.hasNode("graphhost-rtp-127.0.0.1-\(first)")
            }, "the RTP sink did not move to the new port")
        XCTAssertEqual(try destinations(), ["127.0.0.1:\(second)"])
        XCTAssertTrue(
            try TestSupport.waitUntil {
                try StreamRoutesTests.linked(pw, "routing") == ["graphhost-rtp-127.0.0.1-\(second)"]
            })

        XCTAssertEqual(try control.ctl(["load", graph(#""target": "\#(HeadlessPipeWire.peerSink)""#)]).status, 0)
        XCTAssertTrue(
            try TestSupport.waitUntil { try StreamRoutesTests.linked(pw, "routing") == [HeadlessPipeWire.peerSink] },
            "the output did not move to its new target")
        XCTAssertFalse(try pw.hasNode("graphhost-rtp-127.0.0.1-\(second)"))
        let position = try control.position()
        XCTAssertTrue(try control.waitForPosition(position + 1), "the graph does not play after the move")
    }
}
