import Atomics
import Foundation
import XCTest

@testable import GraphHost

/// The decoder's wait for room in its ring: the producer sleeps on a semaphore with no timeout, and only the
/// consumer's `consumed` after a read wakes it. A lost wake-up leaves the producer asleep for good.
final class RingSignalTests: XCTestCase {
    func testAProducerAsleepOnRoomIsWokenByTheConsumersReads() {
        let index = SPSCIndex.create(capacity: 64)
        let signal = RingSignal.create()
        let total = 1_000_000
        let room = 16
        let sleeps = ManagedAtomic(0)
        let stop = ManagedAtomic(false)
        let produced = DispatchSemaphore(value: 0)
        let consumed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var written = 0
            while written < total {
                let free = index.writable()
                if free >= room {
                    written += min(free, total - written)
                    index.written.store(written, ordering: .releasing)
                } else {
                    sleeps.wrappingIncrement(ordering: .relaxed)
                    signal.wait(untilWritable: room, in: index)
                }
            }
            produced.signal()
        }
        Thread.detachNewThread {
            var read = 0
            while read < total && !stop.load(ordering: .relaxed) {
                let available = index.readable()
                if available > 0 {
                    read += min(available, 5)
                    index.read.store(read, ordering: .releasing)
                    signal.roomFreed(in: index)
                } else {
                    sched_yield()
                }
            }
            consumed.signal()
        }
        let finished = produced.wait(timeout: .now() + 120) == .success
        stop.store(true, ordering: .relaxed)
        XCTAssertEqual(consumed.wait(timeout: .now() + 120), .success)
        XCTAssertTrue(finished, "the producer slept through a wake-up after \(sleeps.load(ordering: .relaxed)) sleeps")
        XCTAssertGreaterThan(sleeps.load(ordering: .relaxed), 1000, "the producer waited for room")
        guard finished else { return }  // a producer still asleep owns the semaphore
        index.destroy()
        signal.destroy()
    }
}
