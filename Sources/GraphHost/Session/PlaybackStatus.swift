import FoundationEssentials
import Glibc

/// The numbers shown in `run`'s status line and summary.
public struct PlaybackStatus: Sendable {
    let counters: PlaybackCounters
    let recorder: RecordingWriter?
    let sampleRate: Double

    public init(counters: PlaybackCounters, recorder: RecordingWriter?, sampleRate: Double) {
        self.counters = counters
        self.recorder = recorder
        self.sampleRate = sampleRate
    }

    public var seconds: Double { Double(counters.frames.load(ordering: .relaxed)) / sampleRate }
    public var positionText: String { Format.printf("%.2f s", seconds) }
    /// Streams' underruns and live inputs' dropouts.
    public func underruns(_ session: GraphSession) -> Int {
        session.graph.streams.reduce(0) { $0 + $1.counters.underruns.load(ordering: .relaxed) } + session.graph.liveInputs.reduce(0) { $0 + $1.dropouts }
    }
    public var xruns: Int { counters.xruns.load(ordering: .relaxed) }

    /// The status as a JSON-ready dictionary (the `status` command).
    public func dictionary(_ session: GraphSession) -> [String: Any] {
        let graph = session.graph
        var status: [String: Any] = [
            "position": seconds, "playing": !session.paused, "underruns": underruns(session), "xruns": xruns,
            "quantum": counters.quantum.load(ordering: .relaxed), "callbacks": counters.callbacks.load(ordering: .relaxed),
            "pluginBlockLengths": session.pluginBlockLengths,
            "firstSoundNanos": counters.firstSoundNanos.load(ordering: .relaxed),
            "streamsFinished": graph.streams.map(\.finished),
            "streams": graph.streams.map { s -> [String: Any] in
                var entry: [String: Any] = ["id": s.id, "state": s.state.rawValue, "bufferFill": Double(s.ring.index.readable()) / Double(s.ring.capacityFrames),
                                            "underruns": s.counters.underruns.load(ordering: .relaxed),
                                            "silencedFrames": s.damage.silencedFrames, "skippedBytes": s.damage.skippedBytes]
                entry["url"] = s.mediaURL
                entry["position"] = s.position(rate: sampleRate)
                if let title = s.title { entry["title"] = title }
                if s.network?.title?.isEmpty ?? true, let artist = s.tags?.artist { entry["artist"] = artist }
                if let duration = s.tags?.durationSeconds { entry["duration"] = duration }
                if let media = s.media {
                    entry["media"] = media.description
                    entry["codec"] = media.codec
                }
                if let failure = s.failure { entry["error"] = "\(failure)" }
                if let n = s.network {
                    if let problem = n.problem { entry["problem"] = problem }
                    entry["bytesLoaded"] = n.bytesLoaded
                    if let total = n.totalBytes { entry["totalBytes"] = total }
                    entry["reconnects"] = n.reconnects
                }
                return entry
            },
            "inputs": graph.liveInputs.map { input -> [String: Any] in
                // The latest slice's peak; silence reads -120.
                let peak = Double(input.counters.peak)
                return ["id": input.id, "dropouts": input.dropouts, "playing": input.counters.playing.load(ordering: .relaxed),
                        "resamplerFrames": input.resamplerFrames.load(ordering: .relaxed),
                        "trimmedFrames": input.counters.trimmedFrames.load(ordering: .relaxed),
                        "levelDBFS": peak > 1e-6 ? (20 * log10(peak) * 10).rounded() / 10 : -120]
            },
            "pluginOutputs": graph.pluginOutputs,
            "pluginProperties": graph.pluginProperties,
            "silencedSlices": graph.silencedSlices,
            "overruns": counters.overruns.load(ordering: .relaxed),
            "chains": Dictionary(uniqueKeysWithValues: graph.document.chainNodes.map { ($0.id, $0.chain) }),
            "applied": ["messages": session.appliedMessages.load(ordering: .acquiring), "nanos": session.appliedNanos.load(ordering: .relaxed)],
        ]
        if let pending = session.pendingSwap { status["building"] = pending.document.displayName }
        if var midi = graph.document.midiControl?.statusObject {
            if let (node, parameter) = session.learning { midi["learning"] = "\(node) \(parameter.name)" }
            status["midiControl"] = midi
        }
        let compensation = graph.compensation
        status["latency"] = ["frames": compensation.total, "milliseconds": Double(compensation.total) * 1000 / sampleRate,
                             "mixerDelays": compensation.delays.filter { $0.value.contains { $0 > 0 } }]
        let memory = RenderMemory.report
        status["memory"] = ["lockedBytes": memory.lockedBytes, "notLockedBytes": memory.failedBytes]
        if let recorder {
            status["recording"] = ["path": recorder.path, "seconds": Double(recorder.framesWritten) / sampleRate, "droppedFrames": recorder.droppedFrames]
        }
        return status
    }

    public func line(_ session: GraphSession) -> String {
        let graph = session.graph
        let fill = graph.streams.first.map { s in 100 * s.ring.index.readable() / s.ring.capacityFrames } ?? 0
        let busy = Double(counters.busyNanos.load(ordering: .relaxed))
        let budget = Double(max(1, counters.budgetNanos.load(ordering: .relaxed)))
        let quantum = counters.quantum.load(ordering: .relaxed)
        var network = ""
        if let s = graph.streams.first, let n = s.network {
            let loaded = Format.printf("%.1f", Double(n.bytesLoaded) / 1e6) + (n.totalBytes.map { Format.printf("/%.1f", Double($0) / 1e6) } ?? "") + " MB"
            network = " | \(s.state.rawValue) \(loaded)" + (n.title.flatMap { $0.isEmpty ? nil : " | ♪ \($0)" } ?? "")
        }
        return positionText + Format.printf(" | buffer %d%% | underruns %d | xruns %d | CPU %.1f%% of %d-frame quantum",
                                     fill, underruns(session), xruns, 100 * busy / budget, quantum) + network
    }
}
