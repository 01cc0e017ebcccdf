import Foundation
import XCTest

@testable import GraphHost

/// `run` keeps only the render world's memory resident: buffers allocated for rendering are pinned page by page.
final class RenderMemoryTests: XCTestCase {
    let page = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// VmLck of this process, in bytes.
    static func lockedBytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmLck:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1) * 1024
    }

    override func tearDown() { RenderMemory.setLocking(false) }

    func testARingAllocatedWhileLockingIsResidentAndReleasedWhenFreed() throws {
        let ring = PCMRing.allocate(minimumFrames: 1 << 16, channels: 2)
        XCTAssertEqual(RenderMemory.report.lockedBytes, 0, "nothing is pinned while locking is off")
        ring.deallocate()
        RenderMemory.setLocking(true)
        let (reported, kernel) = (RenderMemory.report.lockedBytes, Self.lockedBytes())
        let locked = PCMRing.allocate(minimumFrames: 1 << 18, channels: 2)  // 2 MiB of samples
        XCTAssertEqual(
            RenderMemory.report.failedBytes, 0,
            "mlock failed: \(String(cString: strerror(RenderMemory.report.lastError)))")
        XCTAssertGreaterThanOrEqual(RenderMemory.report.lockedBytes - reported, 2 << 20)
        XCTAssertGreaterThanOrEqual(Self.lockedBytes() - kernel, 2 << 20)
        locked.deallocate()
        XCTAssertEqual(RenderMemory.report.lockedBytes, reported)
        XCTAssertEqual(Self.lockedBytes(), kernel)
    }

    /// Two allocations on one page: freeing the first keeps the page locked for the second.
    func testASharedPageStaysLockedUntilItsLastUserIsFreed() throws {
        RenderMemory.setLocking(true)
        var raw: UnsafeMutableRawPointer?
        XCTAssertEqual(posix_memalign(&raw, page, 3 * page), 0)
        let base = try XCTUnwrap(raw)
        defer { free(base) }
        let start = RenderMemory.report.lockedBytes
        RenderMemory.pin(base, bytes: page + 1)  // pages 0 and 1
        XCTAssertEqual(RenderMemory.report.lockedBytes - start, 2 * page)
        RenderMemory.pin(base + page + 100, bytes: 10)  // page 1 again
        XCTAssertEqual(RenderMemory.report.lockedBytes - start, 2 * page)
        RenderMemory.unpin(base)
        XCTAssertEqual(RenderMemory.report.lockedBytes - start, page, "page 1 still has a user")
        RenderMemory.unpin(base + page + 100)
        XCTAssertEqual(RenderMemory.report.lockedBytes, start)
        RenderMemory.unpin(base)  // not pinned any more: nothing happens
        XCTAssertEqual(RenderMemory.report.lockedBytes, start)
    }
}
