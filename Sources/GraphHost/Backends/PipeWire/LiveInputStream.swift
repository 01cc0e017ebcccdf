import Atomics
import CPipeWireGlue
import FoundationEssentials
import Glibc

/// The PipeWire stream of a `capture` or `sink` node: a capture stream (a source, or a sink's monitor) or a virtual
/// Audio/Sink that applications play into. Its process callback, on PipeWire's data thread, copies each cycle's
/// audio into the node's ring, which the graph reads at its next slice; through a `CycleGate` the last input of a
/// cycle then runs the output. PipeWire's adapter converts the input to the graph's rate and channels. Created and
/// destroyed under the player's thread loop lock.
final class LiveInputStream {
    /// What the process callback reads.
    struct Target {
        var stream: OpaquePointer?
        var ring: PCMRing
        var resamplerFrames: UnsafeAtomic<Int>
        var cycleFrames: UnsafeAtomic<Int>
        var writtenCycle: UnsafeAtomic<UInt64>
        /// The stream's spa_io_position, set from io_changed.
        var position: UnsafeAtomic<UnsafeMutableRawPointer?>
        var channels: Int
        /// Set when the negotiated format is planar.
        var planar = true
        var channelPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
        /// Frames that did not fit in the ring (the graph stopped reading).
        var overflows = 0
        /// The gate that runs the output once the cycle's inputs ran (nil: the output runs on its own), this input's
        /// bit in it, and whether it has counted itself in.
        var gate: UnsafeMutablePointer<CycleGate>?
        var bit: UInt64 = 0
        var joined = false
        /// The player's `LatencyReport` (opaque), told of the Latency PipeWire sets on the stream.
        var latencyReport: UnsafeMutableRawPointer?
    }

    let id: String
    /// Where its sound comes from (a changed target or sink name needs a new stream).
    let source: LiveInputInstance.Source
    let nodeName: String
    /// Its bit in the gate (0 when ungated).
    let bit: UInt64
    private let handle: StreamHandle<Target>

    init(
        core: OpaquePointer, input: LiveInputSpec, graphName: String, format: GraphFormat, group: String,
        gate: UnsafeMutablePointer<CycleGate>?, bit: UInt64, latencyReport: LatencyReport
    ) throws {
        id = input.id
        self.bit = gate == nil ? 0 : bit
        source = input.source
        var properties = [(PW_KEY_MEDIA_TYPE, "Audio"), (PW_KEY_NODE_GROUP, group), ("node.link-group", group)]
        switch input.source {
        case .capture(let target, let monitor):
            nodeName = "\(graphName).\(input.id)"
            properties += [(PW_KEY_MEDIA_CATEGORY, "Capture"), (PW_KEY_MEDIA_ROLE, "Production")]
            if let target { properties.append(("target.object", target)) }
            if monitor { properties.append(("stream.capture.sink", "true")) }
        case .sink(let name, let description):
            nodeName = name ?? "\(graphName).\(input.id)"
            properties += [
                (PW_KEY_MEDIA_CLASS, "Audio/Sink"), (PW_KEY_NODE_DESCRIPTION, description ?? input.id),
                (PW_KEY_NODE_VIRTUAL, "true"),
                // Nothing to power down: WirePlumber would otherwise suspend it (and its format) after 5 s idle.
                ("session.suspend-timeout-seconds", "0"),
            ]
        }
        let pointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocateRender(capacity: format.channels)
        pointers.initialize(repeating: input.ring.samples, count: format.channels)
        handle = try StreamHandle(
            core: core, name: nodeName, properties: properties,
            makeTarget: {
                Target(
                    stream: $0, ring: input.ring, resamplerFrames: input.resamplerFrames,
                    cycleFrames: input.cycleFrames,
                    writtenCycle: input.writtenCycle, position: .create(nil), channels: format.channels,
                    channelPointers: pointers, gate: gate, bit: gate == nil ? 0 : bit,
                    latencyReport: latencyReport.opaque)
            },
            setEvents: { events in
                events.process = { data in
                    // The data thread.
                    LiveInputStream.process(data!.assumingMemoryBound(to: Target.self))
                }
                events.param_changed = { data, id, param in
                    let target = data!.assumingMemoryBound(to: Target.self)
                    if id == SPA_PARAM_Latency.rawValue, let param, let report = target.pointee.latencyReport,
                        let stream = target.pointee.stream
                    {
                        LatencyReport.from(report).received(param, on: stream)
                    }
                    // Before the first process call of this format (PipeWire emits it on the loop that processes).
                    guard id == SPA_PARAM_Format.rawValue, let param, let planar = StreamHandle<Target>.isPlanar(param)
                    else { return }
                    target.pointee.planar = planar
                }
                events.io_changed = { data, id, area, _ in
                    guard id == SPA_IO_Position.rawValue else { return }
                    data!.assumingMemoryBound(to: Target.self).pointee.position.store(area, ordering: .releasing)
                }
            })
        try handle.connect(
            SPA_DIRECTION_INPUT, what: "the input '\(input.id)'", cleanUp: Self.cleanUp,
            formats: StreamHandle<Target>.audioFormats(format))
    }

    static func cleanUp(_ target: UnsafeMutablePointer<Target>) {
        target.pointee.channelPointers.deallocateRender()
        target.pointee.position.destroy()
    }

    /// Copies the cycle's buffer into the ring, then tells the gate (real-time safe: PipeWire's lock-free buffer
    /// queue, the ring, and the output's process callback).
    @_noLocks
    static func process(_ target: UnsafeMutablePointer<Target>) {
        let cycle = target.pointee.position.load(ordering: .acquiring).map {
            $0.assumingMemoryBound(to: spa_io_position.self).pointee.clock.position
        }
        copy(target, cycle: cycle)
        if let gate = target.pointee.gate, let cycle {
            gate.pointee.arrive(bit: target.pointee.bit, joined: &target.pointee.joined, cycle: cycle)
        }
    }

    @_noLocks
    static func copy(_ target: UnsafeMutablePointer<Target>, cycle: UInt64?) {
        guard let stream = target.pointee.stream,
            let pwBuffer = _unsafePerformance({ pw_stream_dequeue_buffer(stream) })
        else { return }
        let buffer = pwBuffer.pointee.buffer!
        let datas = buffer.pointee.datas!
        let count = Int(buffer.pointee.n_datas)
        let channels = target.pointee.channels
        let ring = target.pointee.ring
        var written = 0
        var frames = 0
        if target.pointee.planar && count >= channels {
            frames = Int(datas[0].chunk.pointee.size) / 4
            var ok = true
            for c in 0..<channels {
                if let data = datas[c].data {
                    target.pointee.channelPointers[c] = (data + Int(datas[c].chunk.pointee.offset)).assumingMemoryBound(
                        to: Float.self)
                } else {
                    ok = false
                }
            }
            if ok { written = ring.write(planar: UnsafePointer(target.pointee.channelPointers), frames: frames) }
        } else if let data = datas[0].data {
            frames = Int(datas[0].chunk.pointee.size) / (4 * channels)
            written = ring.write(
                (data + Int(datas[0].chunk.pointee.offset)).assumingMemoryBound(to: Float.self), frames: frames)
        }
        target.pointee.overflows += frames - written
        if frames > 0 {
            target.pointee.cycleFrames.store(frames, ordering: .relaxed)
            if let cycle { target.pointee.writtenCycle.store(cycle, ordering: .releasing) }
        }
        _ = _unsafePerformance { pw_stream_queue_buffer(stream, pwBuffer) }
        // pw_stream_get_time_n reads the stream's time report under a sequence counter: no lock, no allocation.
        var time = pw_time()
        if _unsafePerformance({ pw_stream_get_time_n(stream, &time, MemoryLayout<pw_time>.size) }) == 0 {
            target.pointee.resamplerFrames.store(Int(time.buffered), ordering: .relaxed)
        }
    }

    /// The PipeWire stream.
    var stream: OpaquePointer { handle.stream }

    /// Frames dropped because the ring was full.
    var overflows: Int { handle.target.pointee.overflows }

    /// Destroys the stream (under the loop lock); the ring stays with the node.
    func destroy() { handle.destroy(Self.cleanUp) }
}
