import CPipeWireGlue
import FoundationEssentials
import Glibc

/// A PipeWire MIDI input (a Stream/Input/Midi node named GRAPHNAME.PORT) feeding a `midi` node: its process callback,
/// on PipeWire's data thread, queues each message with its offset in the cycle, and the node's kernel takes them at
/// the next slice. Created and destroyed under the player's thread loop lock.
final class MIDIInputStream {
    /// What the process callback reads: its stream and the queue it fills.
    struct Target {
        var stream: OpaquePointer?
        var ring: MIDIEventRing
        /// Messages that did not fit (the queue was full, or longer than 3 bytes).
        var dropped = 0
    }

    let name: String
    private let handle: StreamHandle<Target>

    init(core: OpaquePointer, name: String, nodeName: String, ring: MIDIEventRing) throws {
        self.name = name
        handle = try StreamHandle(
            core: core, name: nodeName,
            properties: [
                (PW_KEY_MEDIA_TYPE, "Midi"), (PW_KEY_MEDIA_CATEGORY, "Capture"), (PW_KEY_FORMAT_DSP, "8 bit raw midi"),
                (PW_KEY_NODE_DESCRIPTION, "graphhost MIDI input '\(name)'"),
            ],
            makeTarget: { Target(stream: $0, ring: ring) },
            setEvents: { events in
                events.process = { data in
                    // The data thread.
                    let target = data!.assumingMemoryBound(to: Target.self)
                    gh_midi_input_process(
                        target.pointee.stream,
                        { target, offset, bytes, size in
                            MIDIInputStream.receive(
                                target!.assumingMemoryBound(to: Target.self), offset: Int(offset), bytes: bytes!,
                                size: Int(size))
                        }, data)
                }
            })
        try handle.connect(SPA_DIRECTION_INPUT, what: "the MIDI input '\(name)'") { [gh_build_midi_format($0, $1)] }
    }

    @_noLocks
    static func receive(_ target: UnsafeMutablePointer<Target>, offset: Int, bytes: UnsafePointer<UInt8>, size: Int) {
        if !target.pointee.ring.push(frame: offset, bytes: bytes, size: size) { target.pointee.dropped += 1 }
    }

    /// Messages dropped so far.
    var dropped: Int { handle.target.pointee.dropped }

    /// Destroys the stream (under the loop lock); the queue stays with `MIDIInputPorts`.
    func destroy() { handle.destroy() }
}
