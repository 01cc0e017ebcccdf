/// A lock-free single-producer/single-consumer ring of variable-size messages (a 4-byte length, then the bytes).
/// Used for LV2 worker requests (render → worker thread) and responses (worker thread → render).
/// It is shared by exactly one producer thread and one consumer thread (the contract the compiler cannot check).
public struct ByteRing: @unchecked Sendable {
    public let bytes: UnsafeMutablePointer<UInt8>
    public let index: SPSCIndex

    public static func allocate(capacity: Int) -> ByteRing {
        ByteRing(bytes: .allocateRender(capacity: capacity), index: .create(capacity: capacity))
    }

    public func deallocate() {
        bytes.deallocateRender()
        index.destroy()
    }

    @_noLocks @inline(__always)
    func copyIn(_ source: UnsafeRawPointer, count: Int, at position: Int) {
        let mask = index.capacity - 1
        let src = source.assumingMemoryBound(to: UInt8.self)
        for i in 0..<count { bytes[(position + i) & mask] = src[i] }
    }

    @_noLocks @inline(__always)
    func copyOut(_ destination: UnsafeMutableRawPointer, count: Int, at position: Int) {
        let mask = index.capacity - 1
        let dst = destination.assumingMemoryBound(to: UInt8.self)
        for i in 0..<count { dst[i] = bytes[(position + i) & mask] }
    }

    /// Producer: writes one message; false when it does not fit now.
    @_noLocks
    public func write(_ data: UnsafeRawPointer, size: Int) -> Bool {
        guard size >= 0, index.writable() >= size + 4 else { return false }
        let w = index.written.load(ordering: .relaxed)
        var length = UInt32(size)
        withUnsafeBytes(of: &length) { copyIn($0.baseAddress!, count: 4, at: w) }
        copyIn(data, count: size, at: w + 4)
        index.written.store(w + 4 + size, ordering: .releasing)
        return true
    }

    /// Consumer: reads one message into `buffer` (at most `capacity` bytes); returns its size, or nil when empty.
    @_noLocks
    public func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int? {
        guard index.readable() >= 4 else { return nil }
        let r = index.read.load(ordering: .relaxed)
        var length: UInt32 = 0
        withUnsafeMutableBytes(of: &length) { copyOut($0.baseAddress!, count: 4, at: r) }
        let size = Int(length)
        copyOut(buffer, count: min(size, capacity), at: r + 4)
        index.read.store(r + 4 + size, ordering: .releasing)
        return min(size, capacity)
    }
}
