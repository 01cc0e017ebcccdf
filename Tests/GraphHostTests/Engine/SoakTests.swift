import Foundation
import XCTest

@testable import GraphHost

/// A long offline render with a chain swap every second and a preset change every 0.3 s: memory stays flat,
/// no file descriptor or thread is left behind, and the output is continuous. CI renders 2 minutes of audio;
/// `scripts/reliability` sets GRAPHHOST_SOAK_SECONDS=3600 for the hour.
final class SoakTests: XCTestCase {
    func testSwapsAndPresetsDoNotLeak() throws {
        let seconds = Int(ProcessInfo.processInfo.environment["GRAPHHOST_SOAK_SECONDS"] ?? "") ?? 120
        let media = TestSupport.root.appendingPathComponent("Graphs/media/demo.mp3").path
        let path = TestSupport.graph(
            """
            { "chains": { "warm": [ { "id": "eq", "type": "ipod-eq", "preset": "Bass Booster" } ],
                          "bright": [ { "id": "eq", "type": "ipod-eq", "preset": "Treble Booster" }, \
            { "id": "lv", "type": "lv2", "uri": "urn:graphhost:ipod-eq" } ],
                          "plain": [ { "id": "mix", "type": "mixer", "inputs": 1, "volume": 0.8 }, \
            { "id": "eq", "type": "ipod-eq" } ] },
              "nodes": [ { "id": "song", "type": "stream", "url": "\(media)", "loop": true }, \
            { "id": "fx", "type": "chain", "chain": "warm" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """)
        let chains = ["bright", "plain", "warm"]
        let presets = IPodEQPreset.all.map(\.name)
        var events: [TimedCommand] = []
        for s in 1..<seconds {
            events.append(TimedCommand(frame: s * 48000, request: .chain(node: "fx", name: chains[s % 3])))
        }
        var i = 1
        while i * 14400 < seconds * 48000 {
            // 0.3 s apart, never on a swap's frame (the swap's preset is then the chain's own).
            if (i * 14400) % 48000 != 0 {
                events.append(
                    TimedCommand(
                        frame: i * 14400,
                        command: NodeRequest(node: "fx/eq", action: .preset(presets[i % presets.count]))))
            }
            i += 1
        }
        let session = try TestSupport.session(path)
        defer { session.close() }
        var samples: [(second: Int, usage: ProcessUsage)] = []
        var nextSample = 0
        var position = 0
        var longestSilence = 0
        var silence = 0
        let summary = try OfflineRenderer(session: session, events: events).render(durationFrames: seconds * 48000) {
            buffer, frames in
            for f in 0..<frames {
                if buffer[2 * f] == 0 && buffer[2 * f + 1] == 0 {
                    silence += 1
                    longestSilence = max(longestSilence, silence)
                } else {
                    silence = 0
                }
            }
            position += frames
            if position >= nextSample {
                samples.append((position / 48000, ProcessUsage()))
                nextSample += 48000 * max(1, seconds / 60)
            }
        }
        XCTAssertEqual(summary.frames, seconds * 48000)
        XCTAssertEqual(summary.underruns, 0)
        XCTAssertLessThan(longestSilence, 480, "a gap of \(longestSilence) frames")
        let settled = samples.filter { $0.second >= seconds / 5 }.map(\.usage)
        let rss = settled.map(\.residentKiB)
        let fds = settled.map(\.descriptors)
        let threads = settled.map(\.threads)
        let report =
            "RSS \(rss.min()!)–\(rss.max()!) KiB, fds \(fds.min()!)–\(fds.max()!), threads "
            + "\(threads.min()!)–\(threads.max()!) over \(settled.count) samples after \(seconds / 5) s"
        print("soak \(seconds) s, \(events.count) commands: \(report)")
        XCTAssertLessThanOrEqual(rss.max()! - rss.min()!, 2048, report)
        let half = settled.count / 2
        XCTAssertLessThanOrEqual(fds[half...].max()!, fds[..<half].max()!, report)
        XCTAssertLessThanOrEqual(threads[half...].max()!, threads[..<half].max()!, report)
    }
}
