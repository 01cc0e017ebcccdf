import CLV2

/// One MIDI message at a frame of the graph's time.
public struct MIDIEvent {
    public var frame: Int
    public var size: UInt32
    public var bytes: (UInt8, UInt8, UInt8)

    @_noLocks
    public init(frame: Int, size: UInt32, bytes: (UInt8, UInt8, UInt8)) {
        self.frame = frame
        self.size = size
        self.bytes = bytes
    }
}

/// The render side of a `midi` node: for each slice it writes the events that fall in it, at their frame offsets, as
/// an LV2 atom sequence into its output bus. Offline they come from a MIDI file; live, from a PipeWire MIDI input
/// (`live`, filled by that stream's callback), each at its offset in the cycle it came in. The bus carries events, not
/// audio; only instruments and MIDI processors read it.
public struct MIDISourceKernel {
    public let events: UnsafeMutablePointer<MIDIEvent>
    public let count: Int
    /// Bytes the output bus holds.
    public let capacity: Int
    public let sequenceType: UInt32
    public let midiEventType: UInt32
    /// Frames played so far and the next event to send.
    public var position = 0
    public var next = 0
    /// The live input's messages, and whether to read them instead of the file (set before the kernel renders live).
    public var live: MIDIEventRing?
    public var readsLive = false

    public init(
        events: UnsafeMutablePointer<MIDIEvent>, count: Int, capacity: Int, sequenceType: UInt32, midiEventType: UInt32
    ) {
        self.events = events
        self.count = count
        self.capacity = capacity
        self.sequenceType = sequenceType
        self.midiEventType = midiEventType
    }

    /// Writes the slice's events; events that do not fit in the bus are dropped.
    @_noLocks
    public mutating func process(output: UnsafeMutablePointer<Float>, frames: Int) {
        let sequence = UnsafeMutableRawPointer(output)
        var used = 8  // the sequence body's unit and pad
        (sequence + 8).storeBytes(of: UInt64(0), as: UInt64.self)
        let end = position + frames
        if readsLive, let live {
            // Messages keep their offset in their cycle, in order (a late cycle's come after the earlier ones).
            var last = 0
            while let event = live.pop() {
                let offset = event.frame < last ? last : (event.frame < frames ? event.frame : frames - 1)
                last = offset
                append(event, at: offset, to: sequence, used: &used)
            }
        } else {
            while next < count && events[next].frame < end {
                let event = events[next]
                next += 1
                append(event, at: event.frame > position ? event.frame - position : 0, to: sequence, used: &used)
            }
        }
        sequence.storeBytes(of: UInt32(used), as: UInt32.self)
        (sequence + 4).storeBytes(of: sequenceType, as: UInt32.self)
        position = end
    }

    @_noLocks
    func append(_ event: MIDIEvent, at offset: Int, to sequence: UnsafeMutableRawPointer, used: inout Int) {
        guard 8 + used + 24 <= capacity else { return }
        let at = sequence + 8 + used
        at.storeBytes(of: Int64(offset), as: Int64.self)
        (at + 8).storeBytes(of: event.size, as: UInt32.self)
        (at + 12).storeBytes(of: midiEventType, as: UInt32.self)
        (at + 16).storeBytes(of: event.bytes.0, as: UInt8.self)
        (at + 17).storeBytes(of: event.bytes.1, as: UInt8.self)
        (at + 18).storeBytes(of: event.bytes.2, as: UInt8.self)
        used += 24
    }

    /// True once every event of the file has been sent.
    public var finished: Bool { next >= count }
}

extension MIDISourceKernel: RenderKernel {
    @_noLocks
    public mutating func render(_ step: RenderStep, _ slice: RenderSlice) {
        process(output: step.output!, frames: slice.frames)
    }
}
