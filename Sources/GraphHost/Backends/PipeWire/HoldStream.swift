import CPipeWireGlue
import FoundationEssentials
import Glibc

/// A silent mono playback stream in the graph's node group that keeps the group running while graphhost has its own
/// reasons to play (streams, effect tails, commands). Under `idleAfterSeconds` the outputs link passively to their
/// devices, so with this stream inactive PipeWire runs the group only while an application plays into one of its
/// sinks: it starts the application, the sink and the outputs in the same cycle. With a `CycleGate` it runs after the
/// output (so the data thread is not woken for it at the start of each cycle). Made and switched under the player's
/// loop lock.
final class HoldStream {
    struct Target {
        var stream: OpaquePointer?
    }

    private let handle: StreamHandle<Target>
    private let gate: UnsafeMutablePointer<CycleGate>?
    /// Whether it is active (PipeWire schedules it); the loop thread writes it under the loop lock.
    private(set) var active = true

    init(
        core: OpaquePointer, graphName: String, format: GraphFormat, target: String?, latencyFrames: Int?,
        group: String,
        gate: UnsafeMutablePointer<CycleGate>?
    )
        throws
    {
        self.gate = gate
        var properties = [
            (PW_KEY_MEDIA_TYPE, "Audio"), (PW_KEY_MEDIA_CATEGORY, "Playback"), (PW_KEY_MEDIA_ROLE, "Music"),
            (PW_KEY_NODE_GROUP, group), ("node.link-group", group),
            (PW_KEY_NODE_DESCRIPTION, "graphhost \(graphName) (keeps its graph running)"),
        ]
        if let latencyFrames { properties.append((PW_KEY_NODE_LATENCY, "\(latencyFrames)/\(format.sampleRate)")) }
        if let target { properties.append(("target.object", target)) }
        handle = try StreamHandle(
            core: core, name: "\(graphName).hold", properties: properties, makeTarget: { Target(stream: $0) },
            setEvents: { events in
                events.process = { data in HoldStream.process(data!.assumingMemoryBound(to: Target.self)) }
            })
        var mono = format
        mono.channels = 1
        try handle.connect(
            SPA_DIRECTION_OUTPUT, what: "the hold stream", trigger: gate != nil,
            formats: StreamHandle<Target>.audioFormats(mono))
        gate?.pointee.hold.store(UnsafeMutableRawPointer(handle.stream), ordering: .releasing)
    }

    /// Writes a block of silence (real-time safe).
    @_noLocks
    static func process(_ target: UnsafeMutablePointer<Target>) {
        guard let stream = target.pointee.stream,
            let pwBuffer = _unsafePerformance({ pw_stream_dequeue_buffer(stream) })
        else { return }
        let data = pwBuffer.pointee.buffer.pointee.datas[0]
        var frames = Int(data.maxsize) / 4
        if pwBuffer.pointee.requested > 0 && Int(pwBuffer.pointee.requested) < frames {
            frames = Int(pwBuffer.pointee.requested)
        }
        data.data?.initializeMemory(as: Float.self, repeating: 0, count: frames)
        data.chunk.pointee.offset = 0
        data.chunk.pointee.stride = 4
        data.chunk.pointee.size = UInt32(data.data == nil ? 0 : frames * 4)
        _ = _unsafePerformance { pw_stream_queue_buffer(stream, pwBuffer) }
    }

    /// Activates or deactivates it (PipeWire stops scheduling an inactive stream).
    func setActive(_ on: Bool) {
        guard on != active else { return }
        active = on
        if !on { gate?.pointee.hold.store(nil, ordering: .releasing) }
        _ = pw_stream_set_active(handle.stream, on)
        if on { gate?.pointee.hold.store(UnsafeMutableRawPointer(handle.stream), ordering: .releasing) }
    }

    func destroy() {
        gate?.pointee.hold.store(nil, ordering: .releasing)
        handle.destroy()
    }
}
