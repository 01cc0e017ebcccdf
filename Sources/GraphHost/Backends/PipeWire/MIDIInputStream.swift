import CPipeWire
import Foundation

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
    let stream: OpaquePointer
    private let target: UnsafeMutablePointer<Target>
    private let listener: UnsafeMutablePointer<spa_hook>
    private let events: UnsafeMutablePointer<pw_stream_events>

    init(core: OpaquePointer, name: String, nodeName: String, ring: MIDIEventRing) throws {
        self.name = name
        guard let props = pw_properties_new_string("") else { throw PlaybackError.stream("cannot create properties") }
        pw_properties_set(props, PW_KEY_MEDIA_TYPE, "Midi")
        pw_properties_set(props, PW_KEY_MEDIA_CATEGORY, "Capture")
        pw_properties_set(props, PW_KEY_FORMAT_DSP, "8 bit raw midi")
        pw_properties_set(props, PW_KEY_NODE_NAME, nodeName)
        pw_properties_set(props, PW_KEY_NODE_DESCRIPTION, "graphhost MIDI input '\(name)'")
        pw_properties_set(props, PW_KEY_APP_NAME, "graphhost")
        guard let stream = pw_stream_new(core, nodeName, props) else { throw PlaybackError.stream("cannot create the MIDI input '\(name)'") }
        self.stream = stream
        target = .allocateRender(capacity: 1)
        target.initialize(to: Target(stream: stream, ring: ring))
        listener = .allocate(capacity: 1)
        listener.initialize(to: spa_hook())
        events = .allocate(capacity: 1)
        var e = pw_stream_events()
        e.version = UInt32(PW_VERSION_STREAM_EVENTS)
        e.process = { data in
            // The data thread.
            let target = data!.assumingMemoryBound(to: Target.self)
            graphhost_midi_input_process(target.pointee.stream, { target, offset, bytes, size in
                MIDIInputStream.receive(target!.assumingMemoryBound(to: Target.self), offset: Int(offset), bytes: bytes!, size: Int(size))
            }, data)
        }
        events.initialize(to: e)
        pw_stream_add_listener(stream, listener, events, UnsafeMutableRawPointer(target))
        var buffer = [UInt8](repeating: 0, count: 256)
        var param: UnsafePointer<spa_pod>? = graphhost_build_midi_format(&buffer, UInt32(buffer.count))
        let flags = pw_stream_flags(PW_STREAM_FLAG_AUTOCONNECT.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue | PW_STREAM_FLAG_RT_PROCESS.rawValue)
        let result = pw_stream_connect(stream, SPA_DIRECTION_INPUT, UInt32.max, flags, &param, 1)
        if result < 0 {
            destroy()
            throw PlaybackError.stream("connecting the MIDI input '\(name)' failed: \(String(cString: strerror(-result)))")
        }
    }

    @_noLocks
    static func receive(_ target: UnsafeMutablePointer<Target>, offset: Int, bytes: UnsafePointer<UInt8>, size: Int) {
        if !target.pointee.ring.push(frame: offset, bytes: bytes, size: size) { target.pointee.dropped += 1 }
    }

    /// Messages dropped so far.
    var dropped: Int { target.pointee.dropped }

    /// Destroys the stream (under the loop lock); the queue stays with `MIDIInputPorts`.
    func destroy() {
        pw_stream_destroy(stream)
        target.deinitialize(count: 1).deallocateRender()
        listener.deallocate()
        events.deallocate()
    }
}
