/// A parameter change sent from the control world to one kernel, applied at the start of a render slice.
/// Plain data only: the kernel it addresses, a parameter number and up to 64 values.
public struct ControlMessage {
    public var target: RenderStep.Kernel
    public var parameter: Int32
    public var count: Int32
    public var values: SIMD64<Float>

    public init(target: RenderStep.Kernel, parameter: Int32, values: [Float] = []) {
        precondition(values.count <= 64)
        self.target = target
        self.parameter = parameter
        self.count = Int32(values.count)
        self.values = SIMD64<Float>()
        for (i, v) in values.enumerated() { self.values[i] = v }
    }
}

/// A lock-free single-producer/single-consumer queue of control messages (control world → render world).
public struct ControlQueue {
    public let slots: UnsafeMutablePointer<ControlMessage>
    public let index: SPSCIndex

    public static func allocate(capacity: Int = 1024) -> ControlQueue {
        ControlQueue(slots: .allocate(capacity: capacity), index: .create(capacity: capacity))
    }

    public func deallocate() {
        slots.deallocate()
        index.destroy()
    }

    /// Producer: enqueues a message; false when the queue is full.
    public func push(_ message: ControlMessage) -> Bool {
        guard index.writable() > 0 else { return false }
        let w = index.written.load(ordering: .relaxed)
        (slots + (w & (index.capacity - 1))).initialize(to: message)
        index.written.store(w + 1, ordering: .releasing)
        return true
    }

    /// Consumer: dequeues the oldest message, if any.
    @_noLocks
    public func pop() -> ControlMessage? {
        guard index.readable() > 0 else { return nil }
        let r = index.read.load(ordering: .relaxed)
        let message = slots[r & (index.capacity - 1)]
        index.read.store(r + 1, ordering: .releasing)
        return message
    }
}
