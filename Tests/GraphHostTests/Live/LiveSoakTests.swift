import Foundation
import XCTest

@testable import GraphHost

/// A live soak on a private PipeWire daemon: a looping sine through a chain swapped every 10 s and an isolated plugin
/// (Tests/Fixtures/faults.lv2's crash) that segfaults every `crashSeconds`, with the page open in a real browser and
/// its meters subscribed. CI runs 60 s with a crash every 20 s; `scripts/reliability` sets
/// GRAPHHOST_LIVE_SOAK=3600,60 for an hour with a crash a minute.
final class LiveSoakTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        try? TestPlugins.compile(
            PluginFaultTests.bundle + "/faults.so", PluginFaultTests.bundle + "/faults.c", libraries: ["-lm"])
    }

    /// Anonymous resident memory (RssAnon: heap and stacks, where a leak shows, without the pages of the binary and
    /// its libraries, which count once first touched), descriptors and threads stay flat (the last fifth's largest
    /// against the second fifth's, after the start has settled and every chain has played), and graphhost's own
    /// recording has no gap: every 10 ms of it sounds, finite and within full scale, through every swap and crash;
    /// each crash is named and the plugin restarted.
    func testAnHourOfSwapsCrashesAndAnOpenPageStaysFlat() throws {
        let scale = (ProcessInfo.processInfo.environment["GRAPHHOST_LIVE_SOAK"] ?? "60,20").split(separator: ",")
        let (seconds, crashSeconds) = (Int(scale[0])!, Int(scale[1])!)
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let sine = try TestSupport.sine(seconds: 20)
        // The fixture counts its runs from its (re)start: a crash every `crashSeconds` at 256-frame quanta.
        let runs = crashSeconds * 48000 / 256
        let graph = TestSupport.graph(
            """
            { "chains": { "warm": [ { "id": "eq", "type": "ipod-eq", "preset": "Bass Booster" } ],
                          "bright": [ { "id": "eq", "type": "ipod-eq", "preset": "Treble Booster" },
                                      { "id": "lv", "type": "lv2", "uri": "urn:graphhost:ipod-eq" } ],
                          "plain": [ { "id": "mix", "type": "mixer", "inputs": 1, "volume": 0.8 },
                                     { "id": "eq", "type": "ipod-eq" } ] },
              "nodes": [ { "id": "song", "type": "stream", "url": "\(sine)", "loop": true },
                         { "id": "fx", "type": "chain", "chain": "warm" },
                         { "id": "crash", "type": "lv2", "uri": "urn:graphhost:test:crash", "isolate": true,
                           "controls": { "fault": 1, "after": \(runs) } },
                         { "id": "out", "type": "output", "meter": true } ],
              "links": [ { "from": "song", "to": "fx" }, { "from": "fx", "to": "crash" },
                         { "from": "crash", "to": "out" } ] }
            """, name: "live-soak")
        let record = TestSupport.directory.appendingPathComponent("live-soak.wav").path
        let socket = TestSupport.directory.appendingPathComponent("web-\(getpid())/soak.sock").path
        let run = try pw.graphhost(
            ["run", graph, "--socket", socket, "--http", "0", "--no-mpris", "--latency", "256", "--record", record],
            extraEnvironment: TestPlugins.lv2Path)
        let control = pw.control(socket)
        XCTAssertTrue(run.waitForError(containing: "the page: http://"), run.errorText)
        XCTAssertTrue(control.waitForSocket())
        let url = String(
            try XCTUnwrap(run.errorText.split(separator: "\n").first { $0.hasPrefix("the page: ") })
                .dropFirst("the page: ".count))
        let browser = try WebPageTests.scenarioProcess(["pages", url, "1", "\(seconds)"])
        XCTAssertTrue(
            TestSupport.waitUntil(timeout: 120) { browser.errorText.contains("1 pages open") }, browser.errorText)

        let pid = run.process.processIdentifier
        var samples: [Sample] = []
        // The soak's own schedule: a sample each second, a swap each tenth. Every chain has played once before the
        // second fifth (the first load of the in-process LV2 plugin in "bright" maps its library, a lasting 1.8 MB).
        let chains = ["warm", "bright", "plain"]
        for second in 1...seconds {
            sleep(1)
            samples.append(Sample(pid))
            if second % 10 == 0 {
                XCTAssertEqual(try control.ctl(["chain", "fx", chains[second / 10 % 3]]).status, 0)
            }
        }
        let seen = browser.wait(timeout: 120)
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        let result = run.wait(timeout: 30)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(seen.status, 0, seen.err)
        XCTAssertTrue(seen.out.contains(#""pages": 1"#), seen.out)

        let fifth = samples.count / 5
        func largest(_ range: Range<Int>, _ value: (Sample) -> Int) -> Int {
            samples[range].map(value).max() ?? -1
        }
        let settled = fifth..<(2 * fifth)
        let last = (samples.count - fifth)..<samples.count
        let crashes = result.err.components(separatedBy: "SIGSEGV").count - 1
        let recorded = try SoundFile(path: record).samples
        // The first second is the stream starting and the last 100 ms the fade at `quit`; between, the sine never
        // stops: its longest run of samples under 0.01 is the one or two at a zero crossing, and a gap is longer.
        var (quiet, longestRun) = (0, 0)
        for i in stride(from: 2 * 48000, to: recorded.count - 2 * 4800, by: 2) {
            quiet = abs(recorded[i]) < 0.01 ? quiet + 1 : 0
            longestRun = max(longestRun, quiet)
        }
        let peak = recorded.reduce(Float(0)) { max($0, abs($1)) }
        print(
            "live soak: \(seconds) s, a swap each 10 s, \(crashes) crashes: anonymous resident "
                + "\(largest(settled, \.anonymousKiB)) KiB settled, \(largest(last, \.anonymousKiB)) KiB at the end "
                + "(all resident \(largest(settled, \.usage.residentKiB)), then "
                + "\(largest(last, \.usage.residentKiB))); "
                + "descriptors \(largest(settled, \.usage.descriptors)), then \(largest(last, \.usage.descriptors)); "
                + "threads \(largest(settled, \.usage.threads)), then \(largest(last, \.usage.threads)); the longest "
                + "run under 0.01 \(longestRun) samples, peak \(peak)")
        XCTAssertGreaterThan(largest(settled, \.anonymousKiB), 0, "no RssAnon in /proc/\(pid)/status")
        XCTAssertLessThanOrEqual(
            largest(last, \.anonymousKiB), largest(settled, \.anonymousKiB) + 2048, "anonymous resident memory grew")
        XCTAssertLessThanOrEqual(
            largest(last, \.usage.descriptors), largest(settled, \.usage.descriptors), "descriptors grew")
        XCTAssertLessThanOrEqual(largest(last, \.usage.threads), largest(settled, \.usage.threads), "threads grew")
        XCTAssertGreaterThanOrEqual(crashes, seconds / crashSeconds - 1, result.err)
        XCTAssertTrue(result.err.contains("node 'crash' (urn:graphhost:test:crash)"), result.err)
        XCTAssertGreaterThan(recorded.count, 2 * 48000 * (seconds - 1))
        XCTAssertLessThan(longestRun, 24, "graphhost's own output has a gap")
        XCTAssertTrue(recorded.allSatisfy { $0.isFinite && abs($0) <= 1 })
    }

    /// One second's reading of graphhost: its resident memory, descriptors and threads, and its anonymous resident
    /// memory (`RssAnon` in /proc/PID/status, KiB; -1 when unreadable).
    struct Sample {
        let usage: ProcessUsage
        let anonymousKiB: Int

        init(_ pid: Int32) {
            usage = ProcessUsage(pid)
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            anonymousKiB =
                status.split(separator: "\n").first { $0.hasPrefix("RssAnon:") }.flatMap {
                    Int($0.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "")
                } ?? -1
        }
    }
}
