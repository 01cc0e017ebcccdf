import FoundationEssentials
import Glibc

extension RunStatus {
    /// A metered node's levels (an output node, or a node metered with `"meter": true` or `meter NODE on`).
    public struct Meter: Sendable, Equatable {
        public var node: String
        public var channels: [Level]
    }

    /// One channel's levels in dBFS (silence is -infinity: `-inf` in text, null in JSON); `clips` counts samples at or
    /// above full scale since the meter was turned on.
    public struct Level: Sendable, Equatable {
        /// The largest sample of the last 300 ms.
        public var peak: Double
        /// The largest peak, held for `LevelMeter.holdSeconds` before it follows the peak down.
        public var heldPeak: Double
        /// The RMS of the last 300 ms.
        public var rms: Double
        public var clips: Int

        init(_ reading: LevelMeter.Reading) {
            peak = Self.dBFS(reading.peak)
            heldPeak = Self.dBFS(reading.heldPeak)
            rms = Self.dBFS(reading.meanSquare.squareRoot())
            clips = reading.clips
        }

        /// Silence, with the clips counted so far.
        var silenced: Level {
            var level = self
            (level.peak, level.heldPeak, level.rms) = (-.infinity, -.infinity, -.infinity)
            return level
        }

        static func dBFS(_ linear: Float) -> Double {
            linear > 0 && linear.isFinite ? 20 * log10(Double(linear)) : -.infinity
        }
    }
}

extension CompiledGraph {
    /// The levels of every meter that is on, in the graph's node order.
    public var meterReadings: [RunStatus.Meter] {
        meters.ordered.compactMap { node, meter in
            meter.pointee.read().map { RunStatus.Meter(node: node, channels: $0.map(RunStatus.Level.init)) }
        }
    }

    /// The meter of node `id`; an error when there is no such node or it has no audio output to meter.
    func meter(_ id: String) throws(ControlError) -> UnsafeMutablePointer<LevelMeter> {
        guard let node = document.node(id) else { throw .unknownNode(id, known: document.nodes.map(\.id)) }
        guard let meter = meters.byNode[node.id] else {
            throw .notMetered(node: id, metered: document.nodes.map(\.id).filter { meters.byNode[$0] != nil })
        }
        return meter
    }

    /// Turns the meter of node `id` on or off, noting it in the document.
    func setMeter(_ id: String, on: Bool) throws(ControlError) {
        try meter(id).pointee.isOn.store(on, ordering: .relaxed)
        document.nodes[document.node(id)!.index].meter = on
    }
}

extension RunStatus.Meter {
    public var json: JSONValue {
        .object([
            ("node", .string(node)),
            ("channels", .array(channels.map(\.json))),
        ])
    }
}

extension RunStatus.Level {
    public var json: JSONValue {
        .object([
            ("peak", .level(peak)), ("heldPeak", .level(heldPeak)), ("rms", .level(rms)), ("clips", .number(clips)),
        ])
    }

    /// `-6.0` or `-inf`: dBFS with one decimal.
    static func text(_ dBFS: Double) -> String { dBFS.isFinite ? Format.printf("%.1f", dBFS) : "-inf" }
}

extension GraphSession {
    /// The levels of every meter that is on; silence while paused (a paused run stops rendering once its output has
    /// faded out, and its meters would otherwise hold the last readings they took).
    public var meterReadings: [RunStatus.Meter] {
        let readings = graph.meterReadings
        guard paused else { return readings }
        return readings.map { RunStatus.Meter(node: $0.node, channels: $0.channels.map(\.silenced)) }
    }
}
