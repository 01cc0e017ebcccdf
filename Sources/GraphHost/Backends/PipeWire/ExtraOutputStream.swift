import CPipeWireGlue
import FoundationEssentials
import Glibc

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
        /// The player's `LatencyReport` (opaque), told of the Latency PipeWire sets on the stream.
        var latencyReport: UnsafeMutableRawPointer?
    }

    let id: String
    let nodeName: String
    private let handle: StreamHandle<Target>

    init(
        core: OpaquePointer, id: String, index: Int, fanout: UnsafeMutablePointer<OutputFanout>, targetNode: String?,
        graphName: String, format: GraphFormat, latencyFrames: Int?, group: String,
        passive: Bool = false, latencyReport: LatencyReport
    ) throws {
        self.id = id
        nodeName = "\(graphName).\(id)"
        var properties = [
            (PW_KEY_MEDIA_TYPE, "Audio"), (PW_KEY_MEDIA_CATEGORY, "Playback"), (PW_KEY_MEDIA_ROLE, "Music"),
            (PW_KEY_NODE_GROUP, group), ("node.link-group", group),
        ]
        if let latencyFrames { properties.append((PW_KEY_NODE_LATENCY, "\(latencyFrames)/\(format.sampleRate)")) }
        if let targetNode { properties.append(("target.object", targetNode)) }
        if passive { properties.append((PW_KEY_NODE_PASSIVE, "true")) }
        let pointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocateRender(capacity: format.channels)
        pointers.initialize(repeating: fanout.pointee.tables[index][0], count: format.channels)
        handle = try StreamHandle(
            core: core, name: nodeName, properties: properties,
            makeTarget: {
                Target(
                    stream: $0, fanout: fanout, index: index, channels: format.channels, channelPointers: pointers,
                    latencyReport: latencyReport.opaque)
            },
            setEvents: { events in
                events.process = { data in ExtraOutputStream.process(data!.assumingMemoryBound(to: Target.self)) }
                events.param_changed = { data, id, param in
                    let target = data!.assumingMemoryBound(to: Target.self)
                    if id == SPA_PARAM_Latency.rawValue, let param, let report = target.pointee.latencyReport,
                        let stream = target.pointee.stream
                    {
                        LatencyReport.from(report).received(param, on: stream)
                    }
                    guard id == SPA_PARAM_Format.rawValue, let param, let planar = StreamHandle<Target>.isPlanar(param)
                    else { return }
                    target.pointee.planar = planar
                    var buffer = [UInt8](repeating: 0, count: 1024)
                    let channels = UInt32(target.pointee.channels)
                    let stride = planar ? 4 : 4 * channels
                    var pod: UnsafePointer<spa_pod>? = gh_build_buffers(
                        &buffer, 1024, UInt32(8192), stride, planar ? channels : 1)
                    _ = pw_stream_update_params(target.pointee.stream, &pod, 1)
                }
            })
        try handle.connect(
            SPA_DIRECTION_OUTPUT, what: "the output '\(id)'", cleanUp: Self.cleanUp,
            formats: StreamHandle<Target>.audioFormats(format))
    }

    static func cleanUp(_ target: UnsafeMutablePointer<Target>) { target.pointee.channelPointers.deallocateRender() }

    /// The PipeWire stream.
    var stream: OpaquePointer { handle.stream }

    /// Copies this output's block into the stream's buffer (real-time safe).
    @_noLocks
    static func process(_ target: UnsafeMutablePointer<Target>) {
        guard let stream = target.pointee.stream,
            let pwBuffer = _unsafePerformance({ pw_stream_dequeue_buffer(stream) })
        else { return }
        let buffer = pwBuffer.pointee.buffer!
        let datas = buffer.pointee.datas!
        let count = Int(buffer.pointee.n_datas)
        let channels = target.pointee.channels
        let planar = target.pointee.planar && count >= channels
        let stride = planar ? 4 : 4 * channels
        var frames = Int(datas[0].maxsize) / stride
        if pwBuffer.pointee.requested > 0 && Int(pwBuffer.pointee.requested) < frames {
            frames = Int(pwBuffer.pointee.requested)
        }
        var written = 0
        if planar {
            var ok = true
            for c in 0..<channels {
                if let data = datas[c].data {
                    target.pointee.channelPointers[c] = data.assumingMemoryBound(to: Float.self)
                } else {
                    ok = false
                }
            }
            if ok {
                written = target.pointee.fanout.pointee.take(
                    target.pointee.index, frames: frames, planar: target.pointee.channelPointers, interleaved: nil)
            }
        } else if let data = datas[0].data {
            written = target.pointee.fanout.pointee.take(
                target.pointee.index, frames: frames, planar: nil, interleaved: data.assumingMemoryBound(to: Float.self)
            )
        }
        for i in 0..<(planar ? channels : 1) {
            datas[i].chunk.pointee.offset = 0
            datas[i].chunk.pointee.stride = Int32(stride)
            datas[i].chunk.pointee.size = UInt32(written * stride)
        }
        _ = _unsafePerformance { pw_stream_queue_buffer(stream, pwBuffer) }
    }

    func destroy() { handle.destroy(Self.cleanUp) }
}
