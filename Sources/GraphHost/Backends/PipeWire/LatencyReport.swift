import CPipeWireGlue

/// The latency graphhost reports to PipeWire, so that applications and devices can compensate it. As PipeWire's
/// module-loopback passes each side's latency on to the other, each live input stream (a capture, a virtual sink)
/// reports toward its sources what the output streams were told lies beyond them (their Input-direction latency, down
/// to the device), and each output stream reports toward the device what the inputs were told lies before them (their
/// Output-direction latency); both add the graph's own latency (plugins, isolated nodes: `LatencyCompensation.total`).
/// An application playing into a graphhost sink then hears of the whole path in its stream's delay
/// (pw_stream_get_time_n, pipewire-pulse's stream latency). On PipeWire 0.3.65 a stream publishes only its own
/// direction's Latency, and ignores ProcessLatency: this is how a stream node carries it. Used under the player's
/// thread loop lock (PipeWire calls `received` on the loop's thread).
final class LatencyReport {
    /// The graph's own latency, in nanoseconds (a time, so a graph at another rate than the device's is right too).
    private(set) var graphNanos: UInt64 = 0
    /// The live input streams and the Output-direction latency each was told (what lies before it).
    private var inputs: [OpaquePointer: spa_latency_info] = [:]
    /// The output streams and the Input-direction latency each was told (what lies after it).
    private var outputs: [OpaquePointer: spa_latency_info] = [:]

    /// The opaque pointer streams' callbacks carry to reach this report.
    var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ opaque: UnsafeMutableRawPointer) -> LatencyReport {
        Unmanaged<LatencyReport>.fromOpaque(opaque).takeUnretainedValue()
    }

    /// Adds a live input stream and tells it what lies after the graph.
    func addInput(_ stream: OpaquePointer) {
        inputs[stream] = Self.none(SPA_DIRECTION_OUTPUT)
        publish(SPA_DIRECTION_INPUT, to: [stream], from: outputs)
    }

    /// Adds an output stream and tells it what lies before the graph.
    func addOutput(_ stream: OpaquePointer) {
        outputs[stream] = Self.none(SPA_DIRECTION_INPUT)
        publish(SPA_DIRECTION_OUTPUT, to: [stream], from: inputs)
    }

    /// Forgets a stream about to be destroyed; the other side is told what remains.
    func remove(_ stream: OpaquePointer) {
        if inputs.removeValue(forKey: stream) != nil { publish(SPA_DIRECTION_OUTPUT, to: outputs.keys, from: inputs) }
        if outputs.removeValue(forKey: stream) != nil { publish(SPA_DIRECTION_INPUT, to: inputs.keys, from: outputs) }
    }

    /// Forgets every stream (the player tears them all down).
    func removeAll() {
        inputs = [:]
        outputs = [:]
    }

    /// A Latency param PipeWire set on `stream`: what lies before an input, or after an output, passed on to the
    /// other side.
    func received(_ param: UnsafePointer<spa_pod>, on stream: OpaquePointer) {
        var info = spa_latency_info()
        guard spa_latency_parse(param, &info) >= 0 else { return }
        if inputs[stream] != nil && info.direction == SPA_DIRECTION_OUTPUT {
            inputs[stream] = info
            publish(SPA_DIRECTION_OUTPUT, to: outputs.keys, from: inputs)
        } else if outputs[stream] != nil && info.direction == SPA_DIRECTION_INPUT {
            outputs[stream] = info
            publish(SPA_DIRECTION_INPUT, to: inputs.keys, from: outputs)
        }
    }

    /// Sets the graph's own latency; every stream is told again when it changed.
    func setGraphLatency(frames: Int, sampleRate: Int) {
        let nanos = UInt64(max(0, frames)) * 1_000_000_000 / UInt64(max(1, sampleRate))
        guard nanos != graphNanos else { return }
        graphNanos = nanos
        publish(SPA_DIRECTION_INPUT, to: inputs.keys, from: outputs)
        publish(SPA_DIRECTION_OUTPUT, to: outputs.keys, from: inputs)
    }

    /// The latency of `direction` the other side was told (the largest of each bound), plus the graph's own.
    func latency(_ direction: spa_direction, from told: [OpaquePointer: spa_latency_info]) -> spa_latency_info {
        var info = spa_latency_info()
        spa_latency_info_combine_start(&info, direction)
        for var other in told.values { _ = spa_latency_info_combine(&info, &other) }
        spa_latency_info_combine_finish(&info)
        info.min_ns += graphNanos
        info.max_ns += graphNanos
        return info
    }

    private func publish<Streams: Sequence<OpaquePointer>>(
        _ direction: spa_direction, to streams: Streams, from told: [OpaquePointer: spa_latency_info]
    ) {
        var info = latency(direction, from: told)
        var buffer = [UInt8](repeating: 0, count: 512)
        buffer.withUnsafeMutableBytes { bytes in
            var builder = spa_pod_builder()
            spa_pod_builder_init(&builder, bytes.baseAddress, UInt32(bytes.count))
            var param: UnsafePointer<spa_pod>? = UnsafePointer(
                spa_latency_build(&builder, SPA_PARAM_Latency.rawValue, &info))
            for stream in streams { _ = pw_stream_update_params(stream, &param, 1) }
        }
    }

    private static func none(_ direction: spa_direction) -> spa_latency_info {
        var info = spa_latency_info()
        info.direction = direction
        return info
    }
}
