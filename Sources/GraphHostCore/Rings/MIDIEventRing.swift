/// A lock-free single-producer/single-consumer queue of MIDI messages: a live MIDI input's stream callback (PipeWire's
/// data thread) produces, the `midi` node's kernel consumes. `frame` is the message's offset in the cycle it came in.
public struct MIDIEventRing: @unchecked Sendable {
    public let slots: UnsafeMutablePointer<MIDIEvent>
    public let index: SPSCIndex
    /// Wakes a control-world consumer (the MIDI control surface) sleeping until a message arrives.
    public let signal: RingSignal

    public static func allocate(capacity: Int = 1024) -> MIDIEventRing {
        MIDIEventRing(slots: .allocateRender(capacity: capacity), index: .create(capacity: capacity), signal: .create())
    }

    public func deallocate() {
        slots.deallocateRender()
        index.destroy()
        signal.destroy()
    }

    /// Producer: queues a message of at most 3 bytes; false when full or when the message is longer (sysex).
    @_noLocks
    public func push(frame: Int, bytes: UnsafePointer<UInt8>, size: Int) -> Bool {
        guard size >= 1 && size <= 3 && index.writable() > 0 else { return false }
        let w = index.written.load(ordering: .relaxed)
        let event = MIDIEvent(
            frame: frame, size: UInt32(size),
            bytes: (bytes[0], size > 1 ? bytes[1] : 0, size > 2 ? bytes[2] : 0))
        (slots + (w & (index.capacity - 1))).initialize(to: event)
        index.written.store(w + 1, ordering: .releasing)
        signal.dataWritten(in: index)
        return true
    }

    /// Consumer: the oldest message, removed from the queue.
    @_noLocks
    public func pop() -> MIDIEvent? {
        guard index.readable() > 0 else { return nil }
        let r = index.read.load(ordering: .relaxed)
        let event = slots[r & (index.capacity - 1)]
        index.read.store(r + 1, ordering: .releasing)
        return event
    }
}
