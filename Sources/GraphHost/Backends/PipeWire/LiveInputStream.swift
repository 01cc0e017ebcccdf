import Atomics
import CPipeWire
import Foundation

/// The PipeWire stream of a `capture` or `sink` node: a capture stream (a source, or a sink's monitor) or a virtual
/// Audio/Sink that applications play into. Its process callback, on PipeWire's data thread, copies each cycle's
/// audio into the node's ring, which the graph reads at its next slice. PipeWire's adapter converts the input to the
/// graph's rate and channels. Created and destroyed under the player's thread loop lock.
final class LiveInputStream {
    /// What the process callback reads.
    struct Target {
        var stream: OpaquePointer?
        var ring: PCMRing
        var resamplerFrames: UnsafeAtomic<Int>
        var cycleFrames: UnsafeAtomic<Int>
        var channels: Int
        /// Set when the negotiated format is planar.
        var planar = true
        var channelPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
        /// Frames that did not fit in the ring (the graph stopped reading).
        var overflows = 0
    }

    let id: String
    let nodeName: String
    let stream: OpaquePointer
    private let target: UnsafeMutablePointer<Target>
    private let listener: UnsafeMutablePointer<spa_hook>
    private let events: UnsafeMutablePointer<pw_stream_events>

    init(core: OpaquePointer, input: LiveInputSpec, graphName: String, format: GraphFormat, group: String) throws {
        id = input.id
        guard let props = pw_properties_new_string("") else { throw PlaybackError.stream("cannot create properties") }
        pw_properties_set(props, PW_KEY_MEDIA_TYPE, "Audio")
        pw_properties_set(props, PW_KEY_APP_NAME, "graphhost")
        pw_properties_set(props, PW_KEY_NODE_GROUP, group)
        pw_properties_set(props, "node.link-group", group)
        switch input.source {
        case .capture(let target, let monitor):
            nodeName = "\(graphName).\(input.id)"
            pw_properties_set(props, PW_KEY_MEDIA_CATEGORY, "Capture")
            pw_properties_set(props, PW_KEY_MEDIA_ROLE, "Production")
            if let target { pw_properties_set(props, "target.object", target) }
            if monitor { pw_properties_set(props, "stream.capture.sink", "true") }
        case .sink(let name, let description):
            nodeName = name ?? "\(graphName).\(input.id)"
            pw_properties_set(props, PW_KEY_MEDIA_CLASS, "Audio/Sink")
            pw_properties_set(props, PW_KEY_NODE_DESCRIPTION, description ?? input.id)
            pw_properties_set(props, PW_KEY_NODE_VIRTUAL, "true")
        }
        pw_properties_set(props, PW_KEY_NODE_NAME, nodeName)
        guard let stream = pw_stream_new(core, nodeName, props) else { throw PlaybackError.stream("cannot create the input stream '\(input.id)'") }
        self.stream = stream
        let pointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocateRender(capacity: format.channels)
        pointers.initialize(repeating: input.ring.samples, count: format.channels)
        target = .allocateRender(capacity: 1)
        target.initialize(to: Target(stream: stream, ring: input.ring, resamplerFrames: input.resamplerFrames, cycleFrames: input.cycleFrames,
                                     channels: format.channels, channelPointers: pointers))
        listener = .allocate(capacity: 1)
        listener.initialize(to: spa_hook())
        events = .allocate(capacity: 1)
        var e = pw_stream_events()
        e.version = UInt32(PW_VERSION_STREAM_EVENTS)
        e.process = { data in
            // The data thread.
            LiveInputStream.process(data!.assumingMemoryBound(to: Target.self))
        }
        e.param_changed = { data, id, param in
            guard id == SPA_PARAM_Format.rawValue, let param else { return }
            var rate: UInt32 = 0, channels: UInt32 = 0, planar: Int32 = 0
            guard graphhost_parse_format(param, &rate, &channels, &planar) == 1 else { return }
            // Before the first process call of this format (PipeWire emits it on the loop that processes).
            data!.assumingMemoryBound(to: Target.self).pointee.planar = planar != 0
        }
        events.initialize(to: e)
        pw_stream_add_listener(stream, listener, events, UnsafeMutableRawPointer(target))
        var buffer = [UInt8](repeating: 0, count: 2048)
        var params: [UnsafePointer<spa_pod>?] = [nil, nil]
        let count = graphhost_build_formats(&buffer, UInt32(buffer.count), UInt32(format.sampleRate), UInt32(format.channels), &params)
        let flags = pw_stream_flags(PW_STREAM_FLAG_AUTOCONNECT.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue | PW_STREAM_FLAG_RT_PROCESS.rawValue)
        let result = params.withUnsafeMutableBufferPointer {
            pw_stream_connect(stream, SPA_DIRECTION_INPUT, UInt32.max, flags, $0.baseAddress, count)
        }
        if result < 0 {
            destroy()
            throw PlaybackError.stream("connecting the input '\(input.id)' failed: \(String(cString: strerror(-result)))")
        }
    }

    /// Copies the cycle's buffer into the ring (real-time safe: PipeWire's lock-free buffer queue and the ring).
    @_noLocks
    static func process(_ target: UnsafeMutablePointer<Target>) {
        guard let stream = target.pointee.stream,
              let pwBuffer = _unsafePerformance({ pw_stream_dequeue_buffer(stream) }) else { return }
        let buffer = pwBuffer.pointee.buffer!
        let datas = buffer.pointee.datas!
        let count = Int(buffer.pointee.n_datas)
        let channels = target.pointee.channels
        let ring = target.pointee.ring
        var written = 0, frames = 0
        if target.pointee.planar && count >= channels {
            frames = Int(datas[0].chunk.pointee.size) / 4
            var ok = true
            for c in 0..<channels {
                if let data = datas[c].data { target.pointee.channelPointers[c] = (data + Int(datas[c].chunk.pointee.offset)).assumingMemoryBound(to: Float.self) } else { ok = false }
            }
            if ok { written = ring.write(planar: UnsafePointer(target.pointee.channelPointers), frames: frames) }
        } else if let data = datas[0].data {
            frames = Int(datas[0].chunk.pointee.size) / (4 * channels)
            written = ring.write((data + Int(datas[0].chunk.pointee.offset)).assumingMemoryBound(to: Float.self), frames: frames)
        }
        target.pointee.overflows += frames - written
        if frames > 0 { target.pointee.cycleFrames.store(frames, ordering: .relaxed) }
        _ = _unsafePerformance { pw_stream_queue_buffer(stream, pwBuffer) }
        // pw_stream_get_time_n reads the stream's time report under a sequence counter: no lock, no allocation.
        var time = pw_time()
        if _unsafePerformance({ pw_stream_get_time_n(stream, &time, MemoryLayout<pw_time>.size) }) == 0 {
            target.pointee.resamplerFrames.store(Int(time.buffered), ordering: .relaxed)
        }
    }

    /// Frames dropped because the ring was full.
    var overflows: Int { target.pointee.overflows }

    /// Destroys the stream (under the loop lock); the ring stays with the node.
    func destroy() {
        pw_stream_destroy(stream)
        target.pointee.channelPointers.deallocateRender()
        target.deinitialize(count: 1).deallocateRender()
        listener.deallocate()
        events.deallocate()
    }
}
