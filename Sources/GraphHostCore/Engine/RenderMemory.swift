import Glibc
import Synchronization

/// Keeps the render world's memory resident, so the real-time thread never waits on a page fault: buffers the render
/// world touches are allocated with `allocateRender` and pinned (their pages mlock'ed, which also faults them in),
/// and unpinned when they are freed. Pages are counted, so allocations that share a page keep it locked until the
/// last of them is freed. Only the control world calls this; nothing is pinned until `setLocking(true)`, so offline
/// renders and tests lock nothing. This replaces mlockall, which would also lock every thread stack, malloc arena
/// and library mapping of the process.
public enum RenderMemory {
    /// What pinning has achieved so far.
    public struct Report: Sendable, Equatable {
        /// Bytes in locked pages now.
        public var lockedBytes = 0
        /// Bytes whose pages could not be locked, and the last error (errno) of mlock.
        public var failedBytes = 0
        public var lastError: Int32 = 0
    }

    private struct Pages {
        var enabled = false
        /// The first and last page of each pinned allocation, by address.
        var regions: [Int: (first: Int, last: Int)] = [:]
        /// How many pinned allocations use each page.
        var users: [Int: Int] = [:]
        var report = Report()
    }

    private static let pages = Mutex(Pages())
    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Pins every later render allocation while on (`run` turns it on before it builds the graph). Allocations
    /// pinned before it is turned off are still unpinned when freed.
    public static func setLocking(_ on: Bool) {
        pages.withLock { $0.enabled = on }
    }

    public static var report: Report { pages.withLock { $0.report } }

    /// Locks the pages of `bytes` bytes at `address` (nothing while locking is off).
    public static func pin(_ address: UnsafeRawPointer, bytes: Int) {
        guard bytes > 0 else { return }
        let start = Int(bitPattern: address)
        let first = start / pageSize
        let last = (start + bytes - 1) / pageSize
        pages.withLock { pages in
            guard pages.enabled, pages.regions[start] == nil else { return }
            pages.regions[start] = (first, last)
            for page in first...last {
                pages.users[page, default: 0] += 1
                guard pages.users[page] == 1 else { continue }
                if mlock(UnsafeRawPointer(bitPattern: page * pageSize), pageSize) == 0 {
                    pages.report.lockedBytes += pageSize
                } else {
                    pages.report.failedBytes += pageSize
                    pages.report.lastError = errno
                }
            }
        }
    }

    /// Unlocks the pages of the allocation at `address` that no other pinned allocation uses.
    public static func unpin(_ address: UnsafeRawPointer) {
        let start = Int(bitPattern: address)
        pages.withLock { pages in
            guard let (first, last) = pages.regions.removeValue(forKey: start) else { return }
            for page in first...last {
                pages.users[page, default: 1] -= 1
                guard pages.users[page] == 0 else { continue }
                pages.users.removeValue(forKey: page)
                if munlock(UnsafeRawPointer(bitPattern: page * pageSize), pageSize) == 0 {
                    pages.report.lockedBytes -= pageSize
                }
            }
        }
    }
}

extension UnsafeMutablePointer {
    /// Allocates memory the render world touches: pinned resident while `RenderMemory` locks (control world only).
    public static func allocateRender(capacity: Int) -> UnsafeMutablePointer<Pointee> {
        // Cache-line aligned: buses and plugin buffers start where vector loads do not straddle lines.
        let bytes = capacity * MemoryLayout<Pointee>.stride
        let memory = UnsafeMutableRawPointer.allocate(
            byteCount: max(1, bytes), alignment: Swift.max(64, MemoryLayout<Pointee>.alignment)
        )
        .bindMemory(to: Pointee.self, capacity: capacity)
        RenderMemory.pin(memory, bytes: bytes)
        return memory
    }

    /// Frees memory from `allocateRender` (control world only).
    public func deallocateRender() {
        RenderMemory.unpin(self)
        UnsafeMutableRawPointer(self).deallocate()
    }
}

extension UnsafeMutableRawPointer {
    /// Allocates bytes the render world touches: pinned resident while `RenderMemory` locks (control world only).
    public static func allocateRender(byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer {
        let memory = allocate(byteCount: byteCount, alignment: alignment)
        RenderMemory.pin(memory, bytes: byteCount)
        return memory
    }

    /// Frees memory from `allocateRender` (control world only).
    public func deallocateRender() {
        RenderMemory.unpin(self)
        deallocate()
    }
}

extension UnsafeMutableBufferPointer {
    /// Allocates elements the render world touches: pinned resident while `RenderMemory` locks (control world only).
    public static func allocateRender(capacity: Int) -> UnsafeMutableBufferPointer<Element> {
        UnsafeMutableBufferPointer(
            start: UnsafeMutablePointer<Element>.allocateRender(capacity: capacity), count: capacity)
    }

    /// Frees memory from `allocateRender` (control world only).
    public func deallocateRender() {
        baseAddress?.deallocateRender()
    }
}
