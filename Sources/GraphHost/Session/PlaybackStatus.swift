import FoundationEssentials
import Glibc

/// The numbers shown in `run`'s status line and summary.
public struct PlaybackStatus: Sendable {
    let counters: PlaybackCounters
    let recorder: RecordingWriter?
    let sampleRate: Double
    /// The DSP load the run loop reads once a second (`status`'s `load`).
    public let load = DSPLoadMonitor()

    public init(counters: PlaybackCounters, recorder: RecordingWriter?, sampleRate: Double) {
        self.counters = counters
        self.recorder = recorder
        self.sampleRate = sampleRate
    }

    public var seconds: Double { Double(counters.frames.load(ordering: .relaxed)) / sampleRate }
    public var positionText: String { Format.printf("%.2f s", seconds) }
    /// Streams' underruns and live inputs' dropouts.
    public func underruns(_ session: GraphSession) -> Int {
        session.graph.streams.reduce(0) { $0 + $1.counters.underruns.load(ordering: .relaxed) }
            + session.graph.liveInputs.reduce(0) { $0 + $1.dropouts }
    }
    public var xruns: Int { counters.xruns.load(ordering: .relaxed) }

    /// The status the `status` command answers.
    public func snapshot(_ session: GraphSession) -> RunStatus {
        let graph = session.graph
        let streams = graph.streams.map { s -> RunStatus.Stream in
            var entry = RunStatus.Stream(
                id: s.id, state: s.state.rawValue, url: s.mediaURL, position: s.position(rate: sampleRate),
                bufferFill: Double(s.ring.index.readable()) / Double(s.ring.capacityFrames),
                underruns: s.counters.underruns.load(ordering: .relaxed),
                silencedFrames: s.damage.silencedFrames, skippedBytes: s.damage.skippedBytes)
            entry.title = s.title
            if s.network?.title?.isEmpty ?? true { entry.artist = s.tags?.artist }
            entry.duration = s.tags?.durationSeconds
            entry.media = s.media?.description
            entry.codec = s.media?.codec
            entry.error = s.failure.map { "\($0)" }
            if let rtp = s.rtpCounters {
                entry.rtp = rtp
                entry.latencyMs = Double(rtp.bufferedFrames ?? s.ring.index.readable()) / sampleRate * 1000
                entry.rebufferedFrames = s.counters.rebufferedFrames.load(ordering: .relaxed)
            }
            if let n = s.network {
                entry.problem = n.problem
                entry.bytesLoaded = n.bytesLoaded
                entry.totalBytes = n.totalBytes
                entry.reconnects = n.reconnects
            }
            return entry
        }
        let inputs = graph.liveInputs.map { input -> RunStatus.Input in
            let peak = Double(input.counters.peak)
            return RunStatus.Input(
                id: input.id, playing: input.counters.playing.load(ordering: .relaxed), dropouts: input.dropouts,
                resamplerFrames: input.resamplerFrames.load(ordering: .relaxed),
                trimmedFrames: input.counters.trimmedFrames.load(ordering: .relaxed),
                levelDBFS: peak > 1e-6 ? (20 * log10(peak) * 10).rounded() / 10 : -120)
        }
        let compensation = graph.compensation
        let memory = RenderMemory.report
        let frames = counters.frames.load(ordering: .relaxed)
        let rtpOutputs = graph.document.outputIDs.compactMap { id -> RunStatus.RTPOutput? in
            guard let rtp = graph.document.node(id)?.definition.rtpOutput else { return nil }
            let packetFrames = max(1, rtp.ptime * Int(sampleRate) / 1000)
            return RunStatus.RTPOutput(
                id: id, destination: "\(rtp.address):\(rtp.port)", packetsSent: frames / packetFrames)
        }
        var status = RunStatus(
            graph: graph.document.file.path, position: seconds, playing: !session.paused, underruns: underruns(session),
            xruns: xruns,
            overruns: counters.overruns.load(ordering: .relaxed), quantum: counters.quantum.load(ordering: .relaxed),
            callbacks: counters.callbacks.load(ordering: .relaxed),
            firstSoundNanos: counters.firstSoundNanos.load(ordering: .relaxed),
            streams: streams, streamsFinished: graph.streams.map(\.finished), inputs: inputs,
            meters: session.meterReadings, loudness: session.analysis.loudness, load: load.latest,
            pluginBlockLengths: session.pluginBlockLengths, pluginOutputs: graph.pluginOutputs,
            pluginProperties: graph.pluginProperties,
            silencedSlices: graph.silencedSlices,
            chains: Dictionary(uniqueKeysWithValues: graph.document.chainNodes.map { ($0.id, $0.chain) }),
            appliedMessages: session.appliedMessages.load(ordering: .acquiring),
            appliedNanos: session.appliedNanos.load(ordering: .relaxed),
            building: session.pendingSwap?.document.displayName,
            midiControl: graph.document.midiControl.map { map in
                RunStatus.MIDIControl(map: map, learning: session.learning.map { "\($0.node) \($0.parameter.name)" })
            },
            latency: RunStatus.Latency(
                frames: compensation.total, milliseconds: Double(compensation.total) * 1000 / sampleRate,
                mixerDelays: compensation.delays.filter { $0.value.contains { $0 > 0 } }),
            memory: RunStatus.Memory(lockedBytes: memory.lockedBytes, notLockedBytes: memory.failedBytes),
            threads: RunStatus.Threads(count: session.threads, workerSteps: session.workerSteps),
            recording: recorder.map {
                RunStatus.Recording(
                    path: $0.path, seconds: Double($0.framesWritten) / sampleRate,
                    droppedFrames: $0.droppedFrames)
            })
        status.rtpOutputs = rtpOutputs
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
            let loaded =
                Format.printf("%.1f", Double(n.bytesLoaded) / 1e6)
                + (n.totalBytes.map { Format.printf("/%.1f", Double($0) / 1e6) } ?? "") + " MB"
            network = " | \(s.state.rawValue) \(loaded)" + (n.title.flatMap { $0.isEmpty ? nil : " | ♪ \($0)" } ?? "")
        }
        let output = graph.document.outputIDs.first.flatMap { id in session.meterReadings.first { $0.node == id } }
        return positionText
            + Format.printf(
                " | buffer %d%% | underruns %d | xruns %d | CPU %.1f%% of %d-frame quantum",
                fill, underruns(session), xruns, 100 * busy / budget, quantum)
            + (output.map { " | out " + LevelBar.line($0) } ?? "") + network
    }
}
