/// A change sent from the control world to the render world, applied at the start of a render call. Plain data.
public enum ControlMessage {
    /// A change for one kernel (KernelKinds.swift).
    case kernel(KernelChange)
    /// Pause or play the whole output.
    case transport(Transport.Change)
    /// Tempo, meter or rolling of the graph's musical transport.
    case musicalTime(MusicalTime.Change)
    /// Begin a prepared plan transition.
    case transition(UnsafeMutablePointer<PlanTransition>)
}

/// A lock-free single-producer/single-consumer queue of control messages (control world → render world).
public struct ControlQueue {
    public let slots: UnsafeMutablePointer<ControlMessage>
    public let index: SPSCIndex
    /// Posted by the consumer after it took messages, for a control thread that waits until one it sent was taken
    /// (a swap waiting for the previous swap's transition to begin).
    public let room: RingSignal

    public static func allocate(capacity: Int = 1024) -> ControlQueue {
        ControlQueue(slots: .allocateRender(capacity: capacity), index: .create(capacity: capacity), room: .create())
    }

    public func deallocate() {
        slots.deallocateRender()
        index.destroy()
        room.destroy()
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
}
