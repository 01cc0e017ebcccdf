/// What a control message addresses: one kernel, the transport (pause/play) or a plan transition to begin.
public enum ControlTarget {
    case kernel(RenderStep.Kernel)
    case transport
    case transition(UnsafeMutablePointer<PlanTransition>)
}

/// A change sent from the control world to the render world, applied at the start of a render call.
/// Plain data only: its target, a parameter number and up to 64 values.
public struct ControlMessage {
    public var target: ControlTarget
    public var parameter: Int32
    public var count: Int32
    public var values: SIMD64<Float>

    public init(control target: ControlTarget, parameter: Int32 = 0, values: [Float] = []) {
        precondition(values.count <= 64)
        self.target = target
        self.parameter = parameter
        self.count = Int32(values.count)
        self.values = SIMD64<Float>()
        for (i, v) in values.enumerated() { self.values[i] = v }
    }

    public init(target: RenderStep.Kernel, parameter: Int32, values: [Float] = []) {
        self.init(control: .kernel(target), parameter: parameter, values: values)
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

    /// Consumer: the oldest message, left in the queue.
    @_noLocks
    public func peek() -> ControlMessage? {
        guard index.readable() > 0 else { return nil }
        return slots[index.read.load(ordering: .relaxed) & (index.capacity - 1)]
    }

    /// Consumer: removes the oldest message (after `peek`).
    @_noLocks
    public func dropFirst() {
        index.read.store(index.read.load(ordering: .relaxed) + 1, ordering: .releasing)
    }

    /// Consumer: dequeues the oldest message, if any.
    @_noLocks
    public func pop() -> ControlMessage? {
        guard let message = peek() else { return nil }
        dropFirst()
        return message
    }
}
