import Atomics
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import Synchronization

/// `graphhost run` without its command line: starts the control socket, the graph and the stream, plays until told
/// to stop, the duration is reached, every stream has finished (a stream that failed once it had played counts as
/// finished: it fades out and the rest plays on) or something failed, and shuts down in the one safe
/// order (stream, then socket, then the session's memory). It reconnects with `Reconnection`'s backoff, reloads
/// the graph file under `--watch`, and turns counters into log lines and socket events.
public final class LiveRunner {
    /// How `run` was asked to play.
    public struct Options {
        /// The graph file, reloaded when `watch` is set and it changes.
        public var graphPath: String
        public var watch = false
        /// Stop after this many frames of audio.
        public var durationFrames: Int?
        /// The status line and log lines suited to a terminal.
        public var isTerminal = false

        public init(graphPath: String, watch: Bool = false, durationFrames: Int? = nil, isTerminal: Bool = false) {
            self.graphPath = graphPath
            self.watch = watch
            self.durationFrames = durationFrames
            self.isTerminal = isTerminal
        }
    }

    /// Why playing ended.
    public enum Outcome: Equatable {
        /// A signal, `quit`, or the console's end of input.
        case stopped
        case durationReached
        case finished
        /// A fatal error, with its message.
        case failed(String)
    }

    /// Seconds between two turns of the loop, between status updates, and between looks at the watched file.
    public static let tick = 0.01, statusInterval = 0.25, watchInterval = 0.5
    /// Seconds between two turns while the stream plays steadily: nothing the loop watches then needs a faster look
    /// (commands are carried out on the socket's threads), and each turn costs CPU.
    public static let playingTick = 0.25
    /// Seconds between two readings of the DSP load.
    public static let loadInterval = 1.0
    /// A stream the session manager has neither linked nor refused this long is made afresh: WirePlumber 0.4 now and
    /// then leaves a new stream unanswered (seen in tests right after it started, without a sink).
    public static let unansweredSeconds = 3.0

    public let player: LivePlayback
    public let control: LiveControl
    public let server: CommandServer
    public let recorder: RecordingWriter?
    public let status: PlaybackStatus
    /// Surfaces beside the socket, started with the graph and stopped before it.
    public let surfaces: [ControlSurface]
    /// Shows the status line (a console above its prompt, or a terminal line); nil for none.
    public var showStatus: ((String) -> Void)?
    let options: Options
    let logger: Logger
    let clock: LiveClock
    /// Set by `quit` (any thread); the loop stops at its next turn.
    let quitRequested = ManagedAtomic(false)
    /// Signalled by every applied command and by `quit`: a paused run's loop waits on it instead of ticking.
    let wakeup = LoopWakeup()
    /// The live inputs of the graph a swap just made, until the run loop opens their streams.
    let swappedInputs = SwappedInputs()
    var finished = false
    var startedSurfaces = 0
    /// The thread of a `--watch` reload, and whether it still runs.
    var reloadThread: JoinableThread?
    let reloading = ManagedAtomic(false)

    /// Takes over the session: from here on it is reached through `control`.
    public init(
        session: sending GraphSession, player: LivePlayback, socketPath: String, recorder: RecordingWriter?,
        options: Options, logger: Logger, clock: LiveClock = SystemClock(), surfaces: [ControlSurface] = []
    ) {
        self.surfaces = surfaces
        self.player = player
        self.recorder = recorder
        self.options = options
        self.logger = logger
        self.clock = clock
        let status = PlaybackStatus(
            counters: player.counters, recorder: recorder, sampleRate: Double(session.format.sampleRate))
        self.status = status
        let quitRequested = quitRequested
        let wakeup = wakeup
        // A swap that adds or drops live inputs leaves their list here; the run loop hands it to the player.
        let swappedInputs = swappedInputs
        control = LiveControl(
            session: session, status: { status.snapshot($0) },
            quit: {
                quitRequested.store(true, ordering: .releasing)
                wakeup.signal()
            })
        let control = control
        control.withSession { session in
            session.afterSwap = { [weak control] graph in
                swappedInputs.list.withLock { $0 = graph.liveInputs.map(\.spec) }
                swappedInputs.routing.withLock { $0 = OutputRouting(graph.document, target: nil) }
                control?.swapped(to: graph.document)
            }
        }
        server = CommandServer(path: socketPath, feeds: control, handler: { control.reply(to: $0) })
        control.addListener { [weak server] event in server?.publish(event) }
        control.addListener { _ in wakeup.signal() }
        player.setOnStreamChange { wakeup.signal() }
    }

    /// Asks the loop to stop at its next turn (thread-safe).
    public func requestStop() {
        quitRequested.store(true, ordering: .releasing)
        wakeup.signal()
    }

    /// Starts the socket, then the graph and the stream. The socket comes first: when another run holds it, nothing
    /// has started yet. On an error what was started is stopped again.
    public func start() throws {
        try server.start()
        logger.info("control socket: \(server.path)")
        player.setRecordTap(recorder?.tap)
        recorder?.start()
        control.withSession { $0.graph.start() }
        do {
            player.reportGraphLatency(frames: control.withSession { $0.graph.compensation.total })
            try player.connect()
            for surface in surfaces {
                try surface.start(control: control)
                startedSurfaces += 1
            }
        } catch {
            finish()
            throw error
        }
    }

    /// Plays until an `Outcome`; `shouldStop` is asked at every turn (signals).
    public func play(shouldStop: () -> Bool = { false }) -> Outcome {
        let watchedPath = URL(fileURLWithPath: options.graphPath).standardizedFileURL.path
        var watchedStamp = Self.modificationStamp(watchedPath)
        if options.watch { logger.info("watching \(options.graphPath) for changes") }
        var nextWatch = clock.now
        var nextStatus = clock.now
        var nextLoad = clock.now.addingTimeInterval(Self.loadInterval)
        var reconnection = Reconnection()
        var reported = Reported()
        var waitingSince: Date? = player.streaming ? nil : clock.now
        var idle = IdleClock()
        var restMessages = 0
        var unfollowedQuantum = 0
        while true {
            let paused = control.withSession { $0.paused }
            updateIdle(paused: paused, &idle)
            if let after = player.idleAfterSeconds { updateHold(after: after, paused: paused, messages: &restMessages) }
            // Resting like a sink: nothing runs until an application, a command or a signal wakes the loop (a lost
            // daemon is asked again on the usual ticks).
            let resting =
                !player.holding && !player.streaming && !reconnection.isLost && !player.disconnected && !player.noSink
            control.resting = resting
            if resting && options.durationFrames == nil {
                wakeup.wait(seconds: nil)
            } else if paused || player.idle || resting {
                // Nothing plays: the loop wakes for a command, a quit or a status update, not every tick.
                wakeup.wait(seconds: turn(cap: Self.statusInterval))
            } else {
                clock.sleep(seconds: player.streaming && !reconnection.isLost ? turn(cap: Self.playingTick) : Self.tick)
            }
            if shouldStop() || quitRequested.load(ordering: .acquiring) {
                logger.info("stopping")
                return .stopped
            }
            if let error = player.streamError { return .failed("PipeWire stream: \(error)") }
            if player.disconnected || player.noSink {
                if let failure = keepTrying(&reconnection) { return .failed(failure) }
                waitingSince = clock.now
                continue
            }
            if player.streaming || !player.holding {
                waitingSince = nil
            } else if let since = waitingSince, clock.now.timeIntervalSince(since) >= Self.unansweredSeconds {
                logger.warning(
                    """
                    PipeWire has neither linked nor refused the stream within \
                    \(Format.number(Self.unansweredSeconds)) s; making it again
                    """
                )
                _ = player.reconnect()
                waitingSince = clock.now
            } else if waitingSince == nil {
                waitingSince = clock.now
            }
            if reconnection.isLost && player.streaming {
                let gap = reconnection.recovered(now: clock.now)
                logger.info(
                    """
                    reconnected to PipeWire; continuing from \(status.positionText) \
                    after a gap of \(Format.printf("%.2f", gap)) s
                    """
                )
                control.publish(.reconnected(position: status.seconds, gapSeconds: gap))
            }
            _ = control.withSession {
                $0.followRenderThread()
                return $0.collectRetired()
            }
            if options.watch && clock.now >= nextWatch {
                nextWatch = clock.now.addingTimeInterval(Self.watchInterval)
                let stamp = Self.modificationStamp(watchedPath)
                if stamp != watchedStamp && !reloading.load(ordering: .acquiring) {
                    watchedStamp = stamp
                    reload(watchedPath)
                }
            }
            let streams = control.withSession { $0.graph.streams }
            // A stream that fails before it played could not be opened at all: bad input, as at start-up.
            if let failed = streams.first(where: {
                $0.failure != nil && $0.counters.framesPlayed.load(ordering: .relaxed) == 0
            }) {
                return .failed("stream '\(failed.id)': \(failed.failure!)")
            }
            report(streams: streams, &reported)
            let frames = player.counters.frames.load(ordering: .relaxed)
            if let limit = options.durationFrames, frames >= limit { return .durationReached }
            if options.durationFrames == nil && !streams.isEmpty && streams.allSatisfy({ $0.finished }) {
                logger.info("every stream has finished")
                control.publish(.finished(position: status.seconds))
                return .finished
            }
            if clock.now >= nextStatus {
                nextStatus = clock.now.addingTimeInterval(Self.statusInterval)
                followQuantum(failed: &unfollowedQuantum)
                reportLatency()
                player.reportGraphLatency(frames: control.withSession { $0.graph.compensation.total })
                control.withSession { $0.drainLogs() }
                if let inputs = swappedInputs.list.withLock({ pending in
                    defer { pending = nil }
                    return pending
                }) {
                    player.syncLiveInputs(inputs)
                }
                if let routing = swappedInputs.routing.withLock({ pending in
                    defer { pending = nil }
                    return pending
                }) {
                    player.reroute(routing)
                }
                showStatus?(control.withSession { status.line($0) })
                report(counters: &reported)
            }
            if clock.now >= nextLoad {
                nextLoad = clock.now.addingTimeInterval(Self.loadInterval)
                reportLoad()
            }
        }
    }

    /// Reads the DSP load of the last second and names a node that began to dominate it.
    func reportLoad() {
        let pipeWire = player.takePipeWireLoad()
        guard let (reading, dominated) = control.withSession({ status.load.update($0, pipeWire: pipeWire) }),
            let node = dominated, let figure = reading.nodes.first(where: { $0.id == node })?.figure
        else { return }
        let share = figure.averageMicros / reading.callback.averageMicros
        logger.warning(
            """
            node '\(node)' takes \(Format.printf("%.0f", 100 * share)) % of the render call, which takes \
            \(Format.printf("%.0f", 100 * reading.callback.share)) % of the quantum
            """
        )
        control.publish(
            .loadDominated(node: node, share: share, load: reading.callback.share, position: status.seconds))
    }

    /// Seconds to the next turn: `cap` (`playingTick` while a stream plays steadily, `statusInterval` while the loop
    /// waits for a command with nothing playing), or less when `--duration` ends sooner. A stream awaited or
    /// reconnecting is looked at every `tick`.
    func turn(cap: Double) -> Double {
        guard let limit = options.durationFrames else { return cap }
        let left = Double(limit - player.counters.frames.load(ordering: .relaxed)) / status.sampleRate
        return min(cap, max(left, Self.tick))
    }

    /// Time the stream spends idle, which the loop adds to the position (and the recording) as it passes.
    struct IdleClock {
        var since: Date?
        var counted = 0
        /// Idle because the graph is paused (play wakes it), or because every stream ended and the output went quiet.
        var paused = false
        /// Control messages sent when it went idle: one more wakes it.
        var messages = 0
    }

    /// Output this long below −120 dBFS after every stream ended lets the stream idle (effects' tails have died away).
    static let quietSeconds = 1.0

    /// The stream goes idle (PipeWire stops waking its callback) when nothing would be heard and the render world
    /// has nothing to do: paused and faded out, or every stream ended and the output quiet for `quietSeconds`
    /// (`--duration` not reached yet). Meanwhile the loop moves the position on by the time that passes, and the
    /// recording by as much silence, as the callback would have. Play after a pause, or a message for the render
    /// world, wakes it again.
    func updateIdle(paused: Bool, _ idle: inout IdleClock) {
        let (written, taken, ended) = control.withSession { session in
            (
                session.engine.pointee.messages.index.written.load(ordering: .acquiring),
                session.engine.pointee.messages.index.read.load(ordering: .acquiring),
                !session.graph.streams.isEmpty && session.graph.streams.allSatisfy(\.finished)
                    && session.graph.liveInputs.isEmpty
                    && !session.graph.instances.values.contains { $0.mayMakeSoundUnprompted }
            )
        }
        let counters = player.counters
        if let since = idle.since {
            let frames = Int(clock.now.timeIntervalSince(since) * status.sampleRate) - idle.counted
            if frames > 0 {
                counters.frames.wrappingIncrement(by: frames, ordering: .relaxed)
                recorder?.appendSilence(frames: frames)
                idle.counted += frames
            }
            guard (idle.paused && !paused) || written != idle.messages || !player.idle else { return }
            if player.idle { player.setIdle(false) }
            idle = IdleClock()
            return
        }
        // Paused: the callback that took the last message sent left the graph at rest (one that took it and has not
        // yet said so reads as not resting). Ended: every message taken, and the output quiet long enough.
        let rests =
            paused
            ? counters.restingThrough.load(ordering: .relaxed) == written
            : ended && taken == written
                && Double(counters.quietFrames.load(ordering: .relaxed)) >= Self.quietSeconds * status.sampleRate
        guard rests && player.streaming && player.canIdle else { return }
        player.setIdle(true)
        idle = IdleClock(since: clock.now, paused: paused, messages: written)
    }

    /// Idling like a sink (`idleAfterSeconds`): graphhost stops holding the graph running when no stream plays (or
    /// the graph is paused), no node makes sound by itself, every message was taken and the output has been quiet
    /// for `after` seconds; PipeWire then pauses it unless an application plays into a sink. A message for the render
    /// world holds it again (PipeWire's start by an application is held on the loop thread).
    func updateHold(after: Double, paused: Bool, messages: inout Int) {
        let (written, taken, busy) = control.withSession { session in
            (
                session.engine.pointee.messages.index.written.load(ordering: .acquiring),
                session.engine.pointee.messages.index.read.load(ordering: .acquiring),
                (!paused && session.graph.streams.contains { !$0.finished })
                    || session.graph.instances.values.contains { $0.mayMakeSoundUnprompted }
            )
        }
        guard player.holding else {
            if written != messages { player.setHolding(true) }
            return
        }
        let quiet = Double(player.counters.quietFrames.load(ordering: .relaxed)) >= after * status.sampleRate
        guard !busy && taken == written && quiet && player.streaming else { return }
        logger.debug("idle like a sink: the graph rests until an application plays into it")
        player.setHolding(false)
        messages = written
    }

    /// Stops the stream, then the socket; the recording is closed once nothing renders. Safe to call more than once.
    @discardableResult
    public func finish() -> RecordingWriter.Summary? {
        guard !finished else { return nil }
        finished = true
        control.cancelSwap()
        reloadThread?.join()
        surfaces.prefix(startedSurfaces).reversed().forEach { $0.stop() }
        player.stopStream()
        control.withSession { $0.drainLogs() }
        let recorded = recorder?.finish()
        server.stop()
        return recorded
    }

    /// Finishes if needed, then frees the session's memory.
    public func close() {
        finish()
        control.withSession { $0.close() }
    }

    // MARK: the loop's parts

    /// The stream is down: waits, retries or gives up (returns the error).
    func keepTrying(_ reconnection: inout Reconnection) -> String? {
        if player.disconnected && !reconnection.isLost {
            logger.warning(
                "the PipeWire daemon went away at \(status.positionText); keeping the graph and reconnecting")
        } else if player.noSink && !reconnection.isWaitingForSink {
            logger.warning(
                """
                PipeWire has no sink for the stream yet (\(PipeWirePlayer.noSinkMessage)); \
                retrying for up to \(Format.number(Reconnection.noSinkLimit)) s
                """
            )
        }
        switch reconnection.lost(noSink: !player.disconnected, now: clock.now) {
        case .wait:
            return nil
        case .giveUp:
            return
                "PipeWire stream: no sink appeared within \(Format.number(Reconnection.noSinkLimit)) s "
                + "(\(PipeWirePlayer.noSinkMessage)); start a session manager (wireplumber) with a sink, "
                + "or give --target"
        case .retry:
            if player.noSink {
                logger.info(
                    "asking PipeWire for a sink again (next attempt in \(Format.number(reconnection.backoff)) s)")
            }
            if !player.reconnect() {
                logger.debug("PipeWire is not back yet; next attempt in \(Format.number(reconnection.backoff)) s")
            }
            return nil
        }
    }

    /// The watched file changed: swaps to it on a thread of its own (the loop goes on while the new version warms
    /// up), or keeps playing the previous version and says why.
    func reload(_ path: String) {
        reloading.store(true, ordering: .releasing)
        let (control, logger, shown, reloading) = (control, logger, options.graphPath, reloading)
        reloadThread = JoinableThread(name: "graphhost-reload") {
            var ok = true
            do {
                _ = try control.perform(.load(path: path))
                logger.info("\(shown) changed: swapped to the new version")
            } catch {
                ok = false
                logger.error("\(shown) changed but was not loaded; still playing the previous version: error: \(error)")
            }
            control.publish(.reload(ok: ok))
            reloading.store(false, ordering: .releasing)
        }
    }

    /// Tells the plugins the quantum PipeWire runs the stream at when it changed (their nominal block length); says
    /// once per quantum when that failed (`failed`), and plays on.
    func followQuantum(failed: inout Int) {
        let quantum = player.counters.quantum.load(ordering: .relaxed)
        guard quantum > 0, quantum != failed else { return }
        let told = control.withSession { session -> Bool in
            var format = session.format
            format.nominalFrames = quantum
            return session.nominalFrames == quantum
                && session.pluginBlockLengths.values.allSatisfy { $0 == format.nominalBlockLength }
        }
        guard !told else { return }
        do {
            try control.followBlockLength(quantum)
            logger.debug("quantum \(quantum) frames: plugins told their nominal block length")
        } catch {
            failed = quantum
            logger.warning("the quantum is now \(quantum) frames, but the plugins could not all be told so: \(error)")
        }
    }

    /// Re-aligns parallel paths when a plugin's reported latency changed, and says so.
    func reportLatency() {
        guard let (compensation, tooShort) = control.withSession({ $0.updateCompensation() }) else { return }
        let rate = status.sampleRate
        logger.info(
            """
            latency changed: the graph adds \(compensation.total) frames \
            (\(compensation.milliseconds(compensation.total, sampleRate: Int(rate))) ms); parallel paths realigned
            """
        )
        for id in tooShort {
            logger.warning(
                """
                mixer '\(id)' has no room for the delays that would align its inputs \
                (\(compensation.delays[id] ?? [])); reload the graph to compensate
                """
            )
        }
        control.publish(.latency(frames: compensation.total, position: status.seconds))
    }

    /// What has been reported so far, so each change is reported once.
    struct Reported {
        var titles: [String: String] = [:]
        /// Why each network stream being retried is, and the streams whose failure was reported.
        var problems: [String: String] = [:]
        var failed: Set<String> = []
        var damage: [String: StreamDamage] = [:]
        var silenced: [String: Int] = [:]
        var pluginProcessEvents: [String: Int] = [:]
        var xruns = 0, underruns = 0, overruns = 0, droppedFrames = 0, unlockedBytes = 0
    }

    func report(streams: [StreamInstance], _ reported: inout Reported) {
        for stream in streams {
            if let failure = stream.failure {
                guard reported.failed.insert(stream.id).inserted else { continue }
                logger.error(
                    """
                    stream '\(stream.id)' failed at \(status.positionText): \
                    \(failure); it fades out and the rest of the graph plays on
                    """
                )
                control.publish(.streamFailed(node: stream.id, error: "\(failure)", position: status.seconds))
                continue
            }
            let problem = stream.network?.problem
            guard problem != reported.problems[stream.id] else { continue }
            reported.problems[stream.id] = problem
            if let problem {
                logger.warning(
                    "stream '\(stream.id)': \(problem); retrying for up to \(Format.number(stream.node.retrySeconds)) s"
                )
                control.publish(.streamRetrying(node: stream.id, reason: problem, position: status.seconds))
            } else {
                logger.info("stream '\(stream.id)' is back")
                control.publish(.streamRecovered(node: stream.id, position: status.seconds))
            }
        }
        for stream in streams {
            guard let title = stream.title, reported.titles[stream.id] != title else { continue }
            reported.titles[stream.id] = title
            let artist = stream.network?.title?.isEmpty ?? true ? stream.tags?.artist : nil
            control.publish(.title(node: stream.id, title: title, artist: artist, position: status.seconds))
        }
        for stream in streams {
            let damage = stream.damage
            guard damage != reported.damage[stream.id] ?? StreamDamage() else { continue }
            reported.damage[stream.id] = damage
            if !options.isTerminal {
                logger.warning(
                    """
                    stream '\(stream.id)': damaged MPEG data, \(damage.silencedFrames) \
                    frames silenced, \(damage.skippedBytes) bytes skipped
                    """
                )
            }
            control.publish(
                .damaged(
                    node: stream.id, silencedFrames: damage.silencedFrames, skippedBytes: damage.skippedBytes,
                    position: status.seconds))
        }
    }

    func report(counters reported: inout Reported) {
        let c = player.counters
        let overruns = c.overruns.load(ordering: .acquiring)
        if overruns > reported.overruns {
            reported.overruns = overruns
            let node =
                control.withSession { $0.graph.nodeID(kernelAddress: c.slowKernel.load(ordering: .relaxed)) } ?? "?"
            let took = Double(c.slowNanos.load(ordering: .relaxed)) / 1e6
            let budget = Double(c.budgetNanos.load(ordering: .relaxed)) / 1e6
            logger.warning(
                """
                a callback overran its quantum (\(overruns) so far): node '\(node)' took \
                \(Format.printf("%.2f", took)) ms of \(Format.printf("%.2f", budget)) ms
                """
            )
            control.publish(.overrun(node: node, milliseconds: took, count: overruns))
        }
        let (x, u) = control.withSession { (status.xruns, status.underruns($0)) }
        if x > reported.xruns {
            if !options.isTerminal { logger.warning("xruns: \(x)") }
            control.publish(.xruns(count: x, position: status.seconds))
        }
        if u > reported.underruns {
            if !options.isTerminal { logger.warning("underruns: \(u)") }
            control.publish(.underruns(count: u, position: status.seconds))
        }
        (reported.xruns, reported.underruns) = (x, u)
        for (node, slices) in control.withSession({ $0.graph.silencedSlices }).sorted(by: { $0.key < $1.key })
        where slices > reported.silenced[node, default: 0] {
            reported.silenced[node] = slices
            control.publish(.silenced(node: node, slices: slices, position: status.seconds))
        }
        for (node, said) in control.withSession({ $0.graph.pluginProcessEvents }).sorted(by: { $0.key < $1.key }) {
            for message in said.dropFirst(reported.pluginProcessEvents[node, default: 0]) {
                control.publish(.pluginProcess(node: node, message: message, position: status.seconds))
            }
            reported.pluginProcessEvents[node] = said.count
        }
        let memory = RenderMemory.report
        if memory.failedBytes > reported.unlockedBytes {
            reported.unlockedBytes = memory.failedBytes
            logger.warning(
                """
                could not lock \(memory.failedBytes / 1024) KiB of render memory (mlock: \
                \(String(cString: strerror(memory.lastError)))); the render thread may wait on page faults. \
                Raise the memlock limit (LimitMEMLOCK= in a systemd unit, memlock in /etc/security/limits.conf)
                """
            )
            control.publish(.memoryNotLocked(bytes: memory.failedBytes))
        }
        if let dropped = recorder?.droppedFrames, dropped > reported.droppedFrames {
            reported.droppedFrames = dropped
            logger.warning("recording: \(dropped) frames dropped so far (the writer fell behind)")
            control.publish(.recordingDropped(frames: dropped, position: status.seconds))
        }
    }

    /// The file's modification time and size, to notice edits.
    static func modificationStamp(_ path: String) -> [Double] {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return [] }
        return [
            (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0,
            Double((attributes[.size] as? Int) ?? 0),
        ]
    }
}

/// The live inputs of the graph a swap just made (set under the session, taken by the run loop).
final class SwappedInputs: Sendable {
    let list = Mutex<[LiveInputSpec]?>(nil)
    /// Where the swapped-in graph's outputs play.
    let routing = Mutex<OutputRouting?>(nil)
}
