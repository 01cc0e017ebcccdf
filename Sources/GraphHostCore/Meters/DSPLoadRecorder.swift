import Atomics

/// How long each node's steps and each whole render call take, per render call: for every kernel (by address) and for
/// the call, a count, a sum, the largest time of the current window and a histogram of log-spaced buckets (four per
/// octave), all cumulative. The render world adds a step's time to its kernel's slot (`note`) and publishes the call
/// under a seqlock (`finishCall`); the control world copies the figures (`snapshot`) and subtracts an earlier copy to
/// get a window, and starts a new window for the largest times (`startWindow`). Its memory comes from the control
/// world (`init`, `deallocate`).
public struct DSPLoadRecorder {
    /// Kernels it tells apart; when three quarters are taken it starts afresh (a new `generation`).
    public static var slotCount: Int { 128 }
    /// Bucket 0 holds times below 128 ns; bucket b ≥ 1 starts at 2^(7 + (b−1)/4) · (1 + ((b−1) mod 4)/4) ns; the last
    /// one holds everything from about 1.6 s on.
    public static var bucketCount: Int { 97 }
    static var callSlot: Int { slotCount }

    /// Kernel address per slot, 0 for a free slot.
    let keys: UnsafeMutablePointer<Int>
    /// This call's time per slot, and the call in which the slot was last noted.
    let pending: UnsafeMutablePointer<Int>
    let notedIn: UnsafeMutablePointer<Int>
    let touched: UnsafeMutablePointer<Int>
    var touchedCount = 0
    var used = 0
    var call = 1
    /// Published: per slot and for the call (slot `slotCount`).
    let counts: UnsafeMutablePointer<Int>
    let sums: UnsafeMutablePointer<Int>
    let maxima: UnsafeMutablePointer<Int>
    let histogram: UnsafeMutablePointer<Int>
    /// Published: the generation (bumped when the slots start afresh) and the frames rendered.
    let header: UnsafeMutablePointer<Int>
    let sequence: UnsafeAtomic<Int>
    /// Bumped by the control world to start a new window of largest times.
    let window: UnsafeAtomic<Int>
    var seenWindow = 0

    /// Allocates the recorder's memory (control world only).
    public init() {
        func zeros(_ count: Int) -> UnsafeMutablePointer<Int> {
            let p = UnsafeMutablePointer<Int>.allocateRender(capacity: count)
            p.initialize(repeating: 0, count: count)
            return p
        }
        let slots = Self.slotCount
        keys = zeros(slots)
        pending = zeros(slots)
        notedIn = zeros(slots)
        touched = zeros(slots)
        counts = zeros(slots + 1)
        sums = zeros(slots + 1)
        maxima = zeros(slots + 1)
        histogram = zeros((slots + 1) * Self.bucketCount)
        header = zeros(2)
        sequence = .create(0)
        window = .create(0)
    }

    /// Frees the memory (control world only; nothing may render with it any more).
    public func deallocate() {
        for p in [keys, pending, notedIn, touched, counts, sums, maxima, histogram, header] { p.deallocateRender() }
        sequence.destroy()
        window.destroy()
    }

    /// The bucket of a time in nanoseconds.
    @_noLocks @inline(__always)
    public static func bucket(_ nanos: Int) -> Int {
        guard nanos >= 128 else { return 0 }
        let octave = Int.bitWidth - 1 - nanos.leadingZeroBitCount
        let b = (octave - 7) * 4 + ((nanos >> (octave - 2)) & 3) + 1
        return b < bucketCount ? b : bucketCount - 1
    }

    /// The lower edge of bucket `b` in nanoseconds (0 for bucket 0).
    public static func bucketStart(_ b: Int) -> Double {
        guard b > 0 else { return 0 }
        let octave = 7 + (b - 1) / 4
        return Double(1 << octave) * (1 + Double((b - 1) % 4) / 4)
    }

    /// Adds a step's time to its kernel's slot for this call; a kernel that finds no free slot goes unrecorded until
    /// the slots start afresh.
    @_noLocks
    public mutating func note(_ nanos: Int, kernel address: UnsafeMutableRawPointer?) {
        note(nanos, key: Int(bitPattern: address))
    }

    /// The key of the engine's work on the outputs (output guard, transport fade, output meters, copy to the caller's
    /// buffer): the output nodes' figure.
    public static var outputsKey: Int { outputs }
    static var outputs: Int { 1 }

    /// Adds the output work's time for this call (`outputsKey`).
    @_noLocks
    public mutating func noteOutputs(_ nanos: Int) {
        note(nanos, key: Self.outputs)
    }

    /// Adds a time to the slot of `key` (a kernel address, or `outputsKey`) for this call.
    @_noLocks
    public mutating func note(_ nanos: Int, key: Int) {
        guard key != 0 else { return }
        let mask = Self.slotCount - 1
        var i = Int(truncatingIfNeeded: ((UInt(bitPattern: key) >> 4) &* 0x9E37_79B9_7F4A_7C15) >> 57) & mask
        while keys[i] != key {
            if keys[i] == 0 {
                guard used < Self.slotCount * 3 / 4 else { return }
                keys[i] = key
                used += 1
                break
            }
            i = (i + 1) & mask
        }
        if notedIn[i] != call {
            notedIn[i] = call
            pending[i] = 0
            touched[touchedCount] = i
            touchedCount += 1
        }
        pending[i] += nanos
    }

    /// Publishes the call: each noted kernel's time in this call, and the call's own `nanos` and `frames`.
    @_noLocks
    public mutating func finishCall(nanos: Int, frames: Int) {
        let s = sequence.load(ordering: .relaxed)
        sequence.store(s &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        let w = window.load(ordering: .relaxed)
        if w != seenWindow {
            seenWindow = w
            for i in 0...Self.slotCount { maxima[i] = 0 }
        }
        for t in 0..<touchedCount { add(pending[touched[t]], to: touched[t]) }
        add(nanos, to: Self.callSlot)
        header[1] += frames
        touchedCount = 0
        call += 1
        if used >= Self.slotCount * 3 / 4 { startAfresh() }
        sequence.store(s &+ 2, ordering: .releasing)
    }

    @_noLocks @inline(__always)
    func add(_ nanos: Int, to slot: Int) {
        counts[slot] += 1
        sums[slot] += nanos
        if nanos > maxima[slot] { maxima[slot] = nanos }
        histogram[slot * Self.bucketCount + Self.bucket(nanos)] += 1
    }

    /// Forgets every kernel (a new generation); the call's figures go on.
    @_noLocks
    mutating func startAfresh() {
        for i in 0..<Self.slotCount {
            keys[i] = 0
            notedIn[i] = 0
            counts[i] = 0
            sums[i] = 0
            maxima[i] = 0
        }
        for i in 0..<(Self.slotCount * Self.bucketCount) { histogram[i] = 0 }
        used = 0
        header[0] += 1
    }

    /// Cumulative figures of one kernel or of the render call.
    public struct Figures: Sendable, Equatable {
        public var count = 0
        public var sumNanos = 0
        /// The largest time since the window began (`startWindow`).
        public var maxNanos = 0
        public var histogram = [Int](repeating: 0, count: DSPLoadRecorder.bucketCount)

        public init() {}
    }

    /// A copy of everything published.
    public struct Snapshot: Sendable, Equatable {
        public var generation = 0
        public var frames = 0
        public var call = Figures()
        /// By kernel address.
        public var kernels: [Int: Figures] = [:]
    }

    /// A consistent copy of the published figures, or nil when the render world kept publishing through every
    /// attempt (control world; it never waits).
    public func snapshot() -> Snapshot? {
        for _ in 0..<64 {
            let before = sequence.load(ordering: .acquiring)
            guard before & 1 == 0 else { continue }
            var snapshot = Snapshot()
            snapshot.generation = header[0]
            snapshot.frames = header[1]
            snapshot.call = figures(Self.callSlot)
            for i in 0..<Self.slotCount where keys[i] != 0 && counts[i] > 0 { snapshot.kernels[keys[i]] = figures(i) }
            atomicMemoryFence(ordering: .acquiring)
            if sequence.load(ordering: .relaxed) == before { return snapshot }
        }
        return nil
    }

    func figures(_ slot: Int) -> Figures {
        var f = Figures()
        f.count = counts[slot]
        f.sumNanos = sums[slot]
        f.maxNanos = maxima[slot]
        for b in 0..<Self.bucketCount { f.histogram[b] = histogram[slot * Self.bucketCount + b] }
        return f
    }

    /// Starts a new window of largest times: take a `snapshot` first, then call this.
    public func startWindow() { window.wrappingIncrement(ordering: .relaxed) }
}
