import Foundation
import XCTest

@testable import GraphHost

/// `run --threads 2` against a real, private PipeWire daemon: a graph of two heavy branches shares its slices with a
/// worker that runs at the scheduling of PipeWire's data thread, and what it plays equals the offline render on one
/// thread sample for sample, while it keeps up with a peer in the same daemon.
final class ParallelLiveTests: XCTestCase {
    /// Two streams of the demo song, each through `eqs` iPod EQs, into a mixer.
    static func branchesGraph(eqs: Int) -> String {
        let song = TestSupport.root.appendingPathComponent("Graphs/media/demo.mp3").path
        // One shaped preset per branch: each boost comes with a preamp that lowers the level, so the rest are flat
        // (they cost the same: every band runs).
        let shaped = ["Rock", "Jazz"]
        var nodes = [
            #"{ "id": "a", "type": "stream", "url": "\#(song)" }"#,
            #"{ "id": "b", "type": "stream", "url": "\#(song)" }"#,
            #"{ "id": "mix", "type": "mixer", "inputs": 2, "volumes": [0.5, 0.5] }"#,
            #"{ "id": "out", "type": "output" }"#,
        ]
        var links = [#"{ "from": "mix", "to": "out" }"#]
        for (k, branch) in ["a", "b"].enumerated() {
            var previous = branch
            for i in 0..<eqs {
                let id = "\(branch)\(i)"
                nodes.append(
                    #"{ "id": "\#(id)", "type": "ipod-eq", "preset": "\#(i == 0 ? shaped[k] : "Flat")" }"#)
                links.append(#"{ "from": "\#(previous)", "to": "\#(id)" }"#)
                previous = id
            }
            links.append(#"{ "from": "\#(previous)", "to": "mix:\#(k)" }"#)
        }
        return TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2, "maxFrames": 4096 },
              "nodes": [ \(nodes.joined(separator: ",\n")) ],
              "links": [ \(links.joined(separator: ",\n")) ] }
            """, name: "branches-\(eqs)")
    }

    /// One run of `graph` on two threads beside pw-play: its output, the intact windows of both, and the threads'
    /// scheduling.
    struct ThreadsRun {
        let result: (status: Int32, out: String, err: String)
        let record: String
        let own: (intact: Int, total: Int)
        let peer: (intact: Int, total: Int)
        let scheduling: String
    }

    static func threadsRun(_ graph: String, source: String, rendered: [Float], seconds: Int) throws -> ThreadsRun {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        try pw.addSink(HeadlessPipeWire.peerSink)
        let record = TestSupport.directory.appendingPathComponent("branches-record.wav").path
        let socket = TestSupport.directory.appendingPathComponent("threads-\(getpid())/b.sock").path
        let recordings = try PeerRecordings(pw, name: "branches")
        let run = try pw.graphhost([
            "run", graph, "--threads", "2", "--duration", "\(seconds)", "--latency", "256", "--record", record,
            "--socket", socket,
        ])
        defer { run.interrupt() }
        let peer = try pw.play(source, sink: HeadlessPipeWire.peerSink, latency: 256)
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(
            try TestSupport.waitUntil(timeout: 30) {
                ((try? control.status()["threads"] as? [String: Any])?["workerSteps"] as? Int ?? 0) > 1000
            }, "the worker rendered no share of the slices")
        let status = try control.status()
        XCTAssertEqual((status["threads"] as? [String: Any])?["count"] as? Int, 2)
        let pid = run.process.processIdentifier
        // PipeWire's data thread is the process's other thread named after it (it took the process's name).
        let threads = ProcessThreads.scheduling(pid)
        let dataThread = try XCTUnwrap(
            threads.first { $0.name == "graphhost" && $0.id != pid }, "no data thread in \(threads)")
        let worker = try XCTUnwrap(threads.first { $0.name == "graphhost-dsp1" }, "no worker thread in \(threads)")
        XCTAssertEqual(worker.policy, dataThread.policy, "the worker's policy differs from the data thread's")
        XCTAssertEqual(worker.priority, dataThread.priority, "the worker's priority differs from the data thread's")
        let result = run.wait()
        let peerResult = peer.wait()
        XCTAssertEqual(peerResult.status, 0, peerResult.err)
        let (own, other) = try recordings.finish(reference: rendered)
        return ThreadsRun(
            result: result, record: record, own: own, peer: other,
            scheduling: "data thread policy \(dataThread.policy) priority \(dataThread.priority)")
    }

    /// The worker runs at the data thread's scheduling, the recording equals the offline render on one thread, and
    /// the monitor keeps up with pw-play's in the same seconds (a run where pw-play lost more than
    /// `PeerJudgement.peerLossAllowed` of its windows is measured again).
    func testTwoThreadsPlayWhatOneRendersAtTheDataThreadsScheduling() throws {
        let graph = Self.branchesGraph(eqs: 24)
        let seconds = 15
        let (rendered, source) = try TestSupport.renderedFile(graph, seconds: seconds, name: "branches-offline.wav")
        let measured = try PeerJudgement.measureByLosses("two threads") {
            let run = try Self.threadsRun(graph, source: source, rendered: rendered, seconds: seconds)
            return (run, [PeerRecordings.loss(run.peer)])
        }
        guard let run = measured else { return }
        let (own, other) = (run.own, run.peer)
        XCTAssertEqual(run.result.status, 0, run.result.err)
        XCTAssertTrue(run.result.out.contains("underruns 0"), run.result.out)
        try assertRecordingEqualsTheOfflineRender(run.record, graph: graph)
        print(
            "threads 2, \(run.scheduling); intact 100 ms windows: graphhost \(own.intact) of \(own.total), pw-play "
                + "\(other.intact) of \(other.total)")
        XCTAssertGreaterThan(own.total, 9 * seconds)
        XCTAssertEqual(own.total, other.total)
        XCTAssertGreaterThanOrEqual(
            Double(own.intact), Double(other.intact) - 0.02 * Double(own.total),
            "graphhost \(own.intact), pw-play \(other.intact) of \(own.total)")
    }
}
