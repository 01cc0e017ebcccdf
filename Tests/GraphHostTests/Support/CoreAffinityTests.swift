import XCTest

@testable import GraphHost

/// `render --threads 1` keeps the render thread to its core before the stream decoders start: a thread kept to its CPU
/// starts threads that run there too, and the process's other threads are left as they were.
final class CoreAffinityTests: XCTestCase {
    /// What the threads saw; each is written before the join that makes it visible.
    private final class Seen: @unchecked Sendable {
        var cpu: Int?
        var allowed = 0
        var childAllowed = 0
        var childCPU: Int?
    }

    func testThreadsStartedAfterwardsRunOnTheSameCPU() throws {
        let before = CoreAffinity.allowedCPUs
        XCTAssertGreaterThan(before, 0)
        let seen = Seen()
        JoinableThread(name: "affinity-test") {
            seen.cpu = CoreAffinity.keepToCurrentCPU()
            seen.allowed = CoreAffinity.allowedCPUs
            JoinableThread(name: "affinity-child") {
                seen.childAllowed = CoreAffinity.allowedCPUs
                seen.childCPU = CoreAffinity.currentCPU
            }.join()
        }.join()
        let cpu = try XCTUnwrap(seen.cpu)
        XCTAssertEqual(seen.allowed, 1)
        XCTAssertEqual(seen.childAllowed, 1)
        XCTAssertEqual(seen.childCPU, cpu)
        XCTAssertEqual(CoreAffinity.allowedCPUs, before, "the calling thread's CPUs changed")
    }
}
