import CPipeWire
import Foundation

/// The PipeWire playback stream of a graph's second, third… output node: its callback copies the output's block
/// from the `OutputFanout` the first stream renders into. Created and destroyed under the player's loop lock.
final class ExtraOutputStream {
    struct Target {
        var stream: OpaquePointer?
        var fanout: UnsafeMutablePointer<OutputFanout>
        var index: Int
        var channels: Int
        var planar = true
        var channelPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    }

    let id: String
    let nodeName: String
    let stream: OpaquePointer
    private let target: UnsafeMutablePointer<Target>
    private let listener: UnsafeMutablePointer<spa_hook>
    private let events: UnsafeMutablePointer<pw_stream_events>

    init(core: OpaquePointer, id: String, index: Int, fanout: UnsafeMutablePointer<OutputFanout>, targetNode: String?,
         graphName: String, format: GraphFormat, latencyFrames: Int?, group: String) throws {
        self.id = id
        nodeName = "\(graphName).\(id)"
        guard let props = pw_properties_new_string("") else { throw PlaybackError.stream("cannot create properties") }
        pw_properties_set(props, PW_KEY_MEDIA_TYPE, "Audio")
        pw_properties_set(props, PW_KEY_MEDIA_CATEGORY, "Playback")
        pw_properties_set(props, PW_KEY_MEDIA_ROLE, "Music")
        pw_properties_set(props, PW_KEY_APP_NAME, "graphhost")
        pw_properties_set(props, PW_KEY_NODE_NAME, nodeName)
        pw_properties_set(props, PW_KEY_NODE_GROUP, group)
        pw_properties_set(props, "node.link-group", group)
        if let latencyFrames { pw_properties_set(props, PW_KEY_NODE_LATENCY, "\(latencyFrames)/\(format.sampleRate)") }
        if let targetNode { pw_properties_set(props, "target.object", targetNode) }
        guard let stream = pw_stream_new(core, nodeName, props) else { throw PlaybackError.stream("cannot create the output stream '\(id)'") }
        self.stream = stream
        let pointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocateRender(capacity: format.channels)
        pointers.initialize(repeating: fanout.pointee.tables[index][0], count: format.channels)
        target = .allocateRender(capacity: 1)
        target.initialize(to: Target(stream: stream, fanout: fanout, index: index, channels: format.channels, channelPointers: pointers))
        listener = .allocate(capacity: 1)
        listener.initialize(to: spa_hook())
        events = .allocate(capacity: 1)
        var e = pw_stream_events()
        e.version = UInt32(PW_VERSION_STREAM_EVENTS)
        e.process = { data in ExtraOutputStream.process(data!.assumingMemoryBound(to: Target.self)) }
        e.param_changed = { data, id, param in
            guard id == SPA_PARAM_Format.rawValue, let param else { return }
            var rate: UInt32 = 0, channels: UInt32 = 0, planar: Int32 = 0
            guard graphhost_parse_format(param, &rate, &channels, &planar) == 1 else { return }
            let target = data!.assumingMemoryBound(to: Target.self)
            target.pointee.planar = planar != 0
            var buffer = [UInt8](repeating: 0, count: 1024)
            let stride = planar != 0 ? 4 : 4 * Int(channels)
            var pod: UnsafePointer<spa_pod>? = graphhost_build_buffers(&buffer, 1024, UInt32(8192), UInt32(stride), planar != 0 ? channels : 1)
            _ = pw_stream_update_params(target.pointee.stream, &pod, 1)
        }
        events.initialize(to: e)
        pw_stream_add_listener(stream, listener, events, UnsafeMutableRawPointer(target))
        var buffer = [UInt8](repeating: 0, count: 2048)
        var params: [UnsafePointer<spa_pod>?] = [nil, nil]
        let count = graphhost_build_formats(&buffer, UInt32(buffer.count), UInt32(format.sampleRate), UInt32(format.channels), &params)
        let flags = pw_stream_flags(PW_STREAM_FLAG_AUTOCONNECT.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue | PW_STREAM_FLAG_RT_PROCESS.rawValue)
        let result = params.withUnsafeMutableBufferPointer {
            pw_stream_connect(stream, SPA_DIRECTION_OUTPUT, UInt32.max, flags, $0.baseAddress, count)
        }
        if result < 0 {
            destroy()
            throw PlaybackError.stream("connecting the output '\(id)' failed: \(String(cString: strerror(-result)))")
        }
    }

    /// Copies this output's block into the stream's buffer (real-time safe).
    @_noLocks
    static func process(_ target: UnsafeMutablePointer<Target>) {
        guard let stream = target.pointee.stream,
              let pwBuffer = _unsafePerformance({ pw_stream_dequeue_buffer(stream) }) else { return }
        let buffer = pwBuffer.pointee.buffer!
        let datas = buffer.pointee.datas!
        let count = Int(buffer.pointee.n_datas)
        let channels = target.pointee.channels
        let planar = target.pointee.planar && count >= channels
        let stride = planar ? 4 : 4 * channels
        var frames = Int(datas[0].maxsize) / stride
        if pwBuffer.pointee.requested > 0 && Int(pwBuffer.pointee.requested) < frames { frames = Int(pwBuffer.pointee.requested) }
        var written = 0
        if planar {
            var ok = true
            for c in 0..<channels {
                if let data = datas[c].data { target.pointee.channelPointers[c] = data.assumingMemoryBound(to: Float.self) } else { ok = false }
            }
            if ok { written = target.pointee.fanout.pointee.take(target.pointee.index, frames: frames, planar: target.pointee.channelPointers, interleaved: nil) }
        } else if let data = datas[0].data {
            written = target.pointee.fanout.pointee.take(target.pointee.index, frames: frames, planar: nil, interleaved: data.assumingMemoryBound(to: Float.self))
        }
        for i in 0..<(planar ? channels : 1) {
            datas[i].chunk.pointee.offset = 0
            datas[i].chunk.pointee.stride = Int32(stride)
            datas[i].chunk.pointee.size = UInt32(written * stride)
        }
        _ = _unsafePerformance { pw_stream_queue_buffer(stream, pwBuffer) }
    }

    func destroy() {
        pw_stream_destroy(stream)
        target.pointee.channelPointers.deallocateRender()
        target.deinitialize(count: 1).deallocateRender()
        listener.deallocate()
        events.deallocate()
    }
}
