import Atomics
import Foundation
import XCTest

@testable import GraphHost

/// `load` after `load` of the same graph while it plays, as a page, a script of `graphhost ctl load` or a day of
/// `--watch` reloads sends them: the render world plays every swap's crossfade, the control world frees what it
/// retired, and memory stays flat however many loads come.
final class RepeatedLoadTests: XCTestCase {
    /// 2,000 sequential loads through `LiveControl` (the socket's path) while a thread renders at the pace of a
    /// device clock, faster than real time: none is refused, and anonymous resident memory after the 2,000th is
    /// within 2 MiB of what it was after the 100th (each measured once every swap has played and been freed).
    func testTwoThousandLoadsKeepAnonymousMemoryFlat() throws {
        let media = TestSupport.root.appendingPathComponent("Graphs/media/demo.mp3").path
        let path = TestSupport.graph(
            """
            { "crossfadeSeconds": 0.06,
              "nodes": [ { "id": "song", "type": "stream", "url": "\(media)", "loop": true },
                         { "id": "eq", "type": "ipod-eq", "preset": "Rock" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "eq" }, { "from": "eq", "to": "out" } ] }
            """)
        let session = try TestSupport.session(path)
        session.rendersConcurrently = true
        session.graph.start()
        nonisolated(unsafe) let engine = session.engine
        let status = TestSupport.offlineStatus()
        let control = LiveControl(session: session, status: { status.snapshot($0) }, quit: {})
        let stop = UnsafeAtomic<Bool>.create(false)
        let rendered = UnsafeAtomic<Int>.create(0)
        let finished = DispatchSemaphore(value: 0)
        // This thread plays the render world: 256 frames a millisecond, the pace of a device clock at about 5x real
        // time.
        let renderThread = Thread {
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 256)
            defer {
                buffer.deallocate()
                finished.signal()
            }
            while !stop.load(ordering: .acquiring) {
                engine.pointee.render(frames: 256, interleaved: buffer)
                rendered.wrappingIncrement(ordering: .releasing)
                usleep(1000)
            }
        }
        renderThread.start()
        defer {
            stop.store(true, ordering: .releasing)
            finished.wait()
            control.withSession { $0.close() }
            stop.destroy()
            rendered.destroy()
        }
        XCTAssertTrue(TestSupport.waitUntil { rendered.load(ordering: .acquiring) >= 10 })

        /// Waits until the render world has played every swap and its graphs are freed, then reads RssAnon (KiB).
        func settledAnonKiB() -> Int {
            XCTAssertTrue(
                TestSupport.waitUntil(timeout: 120) { control.withSession { $0.collectRetired() } == 0 },
                "the render world finished every swap")
            let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("RssAnon:") } ?? ""
            return Int(line.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "") ?? -1
        }
        var refused: [String] = []
        var anon: [Int: Int] = [:]
        for i in 1...2000 {
            do {
                _ = try control.perform(.load(path: path, swap: nil))
            } catch {
                refused.append("load \(i): \(error)")
            }
            // The run loop frees what the render world retired on each of its turns.
            control.withSession { _ = $0.collectRetired() }
            if i == 100 || i == 2000 { anon[i] = settledAnonKiB() }
        }
        let report =
            "repeated loads: 2000, \(refused.count) refused; RssAnon \(anon[100]!) KiB after 100, "
            + "\(anon[2000]!) KiB after 2000"
        print(report)
        XCTAssertEqual(refused.count, 0, "\(refused.count) loads refused, the first: \(refused.prefix(3))")
        XCTAssertGreaterThan(anon[100]!, 0)
        XCTAssertLessThanOrEqual(anon[2000]! - anon[100]!, 2048, report)
    }
}
