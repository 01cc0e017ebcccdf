import Foundation
import XCTest

@testable import GraphHost

/// graphhost reports its graph's own latency to PipeWire (the ports' Latency params), so others can compensate it:
/// an application playing into a graphhost sink is told the whole path to the device, and the device is told what
/// lies before it; both follow a `load` that changes the graph's latency.
final class LatencyReportTests: XCTestCase {
    /// The Latency params pw-dump shows on the ports of node `name` (direction "Input" or "Output") as
    /// (min-ns, max-ns), the same on every port of that direction of flow (`portDirection` "input" or "output"), or nil
    /// while the node or its ports are not there or disagree.
    static func latency(_ pw: HeadlessPipeWire, node name: String, ports portDirection: String, _ direction: String)
        throws -> (min: Int, max: Int)?
    {
        let out = try HeadlessPipeWire.execute(
            URL(fileURLWithPath: "/usr/bin/pw-dump"), [], environment: pw.environment
        )
        .out
        guard let objects = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [[String: Any]] else {
            return nil
        }
        let node = objects.first {
            (($0["info"] as? [String: Any])?["props"] as? [String: Any])?["node.name"] as? String == name
        }
        guard let id = node?["id"] as? Int else { return nil }
        var found: Set<[Int]> = []
        for object in objects where (object["type"] as? String)?.hasSuffix("Port") == true {
            guard let info = object["info"] as? [String: Any], info["direction"] as? String == portDirection,
                (info["props"] as? [String: Any])?["node.id"] as? Int == id
            else { continue }
            let params = (info["params"] as? [String: Any])?["Latency"] as? [[String: Any]] ?? []
            guard let entry = params.first(where: { $0["direction"] as? String == direction }),
                let min = entry["minNs"] as? Int, let max = entry["maxNs"] as? Int
            else { return nil }
            found.insert([min, max])
        }
        guard found.count == 1, let only = found.first else { return nil }
        return (only[0], only[1])
    }

    /// A graph's latency as PipeWire's params carry it: nanoseconds at 48 kHz.
    static func nanos(_ frames: Int) -> Int { frames * 1_000_000_000 / 48000 }

    /// Two graphhosts in a row, each a sink through a look-ahead limiter (x42 dpl, which reports its latency) to an
    /// output: A (its limiter isolated, which adds a block) plays into B's sink, B to the device. pw-play plays into
    /// A's sink. pw-play's ports are told A's and B's latency together (what it would compensate), the device's ports
    /// that the same lies before them; a `load` that drops A's limiter leaves B's alone in both.
    func testTheGraphsLatencyIsReportedAlongThePath() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        func graph(sink: String, limiter: String?, target: String?) -> String {
            let limiterNode =
                limiter.map {
                    #"{ "id": "lim", "type": "lv2", "uri": "http://gareus.org/oss/lv2/dpl#stereo" \#($0) },"#
                } ?? ""
            let chain =
                limiter == nil
                ? #"{ "from": "in", "to": "out" }"# : #"{ "from": "in", "to": "lim" }, { "from": "lim", "to": "out" }"#
            return TestSupport.graph(
                """
                { "nodes": [ { "id": "in", "type": "sink", "name": "\(sink)" }, \(limiterNode)
                             { "id": "out", "type": "output"\(target.map { #", "target": "\#($0)""# } ?? "") } ],
                  "links": [ \(chain) ] }
                """)
        }
        let socketB = TestSupport.directory.appendingPathComponent("live/latency-b.sock").path
        let b = try pw.graphhost([
            "run", graph(sink: "latency_b", limiter: "", target: nil), "--name", "latency_b_out", "--socket", socketB,
            "--latency", "256",
        ])
        defer { b.interrupt() }
        let controlB = pw.control(socketB)
        XCTAssertTrue(controlB.waitForSocket())
        XCTAssertTrue(try TestSupport.waitUntil { try pw.hasNode("latency_b") })
        let socketA = TestSupport.directory.appendingPathComponent("live/latency-a.sock").path
        let a = try pw.graphhost([
            "run", graph(sink: "latency_a", limiter: #", "isolate": true"#, target: "latency_b"), "--name",
            "latency_a_out", "--socket", socketA, "--latency", "256",
        ])
        defer { a.interrupt() }
        let controlA = pw.control(socketA)
        XCTAssertTrue(controlA.waitForSocket())
        XCTAssertTrue(try TestSupport.waitUntil { try pw.hasNode("latency_a") })
        let play = try HeadlessPipeWire.Running.pwPlay(pw, TestSupport.sine(seconds: 40), sink: "latency_a")
        defer { play.interrupt() }

        func frames(_ control: HeadlessPipeWire.Control) throws -> Int {
            try XCTUnwrap((try control.status()["latency"] as? [String: Any])?["frames"] as? Int)
        }
        var latencyA = 0
        var latencyB = 0
        XCTAssertTrue(
            try TestSupport.waitUntil {
                latencyA = try frames(controlA)
                latencyB = try frames(controlB)
                return latencyB > 0 && latencyA > latencyB
            }, "the limiters' latencies")
        XCTAssertEqual(latencyA, latencyB + 256, "an isolated plugin adds a block")
        /// Waits until pw-play's ports are told `expected` ns after them and the device's the same before it (both
        /// bounds); fails naming what they were told.
        func expectReported(_ expected: Int, _ when: String) throws {
            var told: (min: Int, max: Int)?
            var device: (min: Int, max: Int)?
            let reported = try TestSupport.waitUntil {
                told = try Self.latency(pw, node: "latprobe", ports: "output", "Input")
                device = try Self.latency(pw, node: "graphhost_test_sink", ports: "input", "Output")
                return told?.min == expected && told?.max == expected && device?.min == expected
                    && device?.max == expected
            }
            XCTAssertTrue(
                reported,
                "\(when): pw-play was told \(String(describing: told)), the device \(String(describing: device)); "
                    + "expected \(expected) ns")
        }
        try expectReported(Self.nanos(latencyA) + Self.nanos(latencyB), "both limiters")

        // A's limiter goes: the path now carries B's latency alone.
        XCTAssertEqual(
            try controlA.ctl(["load", graph(sink: "latency_a", limiter: nil, target: "latency_b")]).status, 0)
        XCTAssertTrue(try TestSupport.waitUntil { try frames(controlA) == 0 })
        try expectReported(Self.nanos(latencyB), "after the load")
    }
}

extension HeadlessPipeWire.Running {
    /// pw-play playing `path` into `sink` as the node `latprobe`.
    static func pwPlay(_ pw: HeadlessPipeWire, _ path: String, sink: String) throws -> HeadlessPipeWire.Running {
        try HeadlessPipeWire.Running(
            URL(fileURLWithPath: "/usr/bin/pw-play"), ["--target", sink, "-P", "{ node.name = latprobe }", path],
            environment: pw.environment)
    }
}
