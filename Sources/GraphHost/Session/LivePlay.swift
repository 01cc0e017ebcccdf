import FoundationEssentials
import Glibc
import Logging

/// A terminal console for a live run (the line editor of `graphhost run`).
public protocol LiveConsole: AnyObject {
    func start()
    func stop()
    /// Shows `text` as the status line above the prompt (called from the run loop's thread).
    func setStatus(_ text: String)
}

/// `graphhost run` once its arguments are parsed: locks the render memory, builds the session, the PipeWire stream and
/// a `LiveRunner`, plays, and prints the summary.
public struct LivePlay {
    public var document: GraphDocument
    /// The graph file, shown in messages and watched under `watch`.
    public var graphPath: String
    public var playback: PlaybackOptions
    /// The control socket (default: `CommandServer.defaultPath(name:)`).
    public var socketPath: String?
    public var durationSeconds: Double?
    /// Record what is played to this WAV or FLAC file.
    public var recordPath: String?
    public var watch = false
    /// Control surfaces beside the socket (OSC, MPRIS, ...), started once the stream is up.
    public var surfaces: [ControlSurface] = []

    public init(
        document: GraphDocument, graphPath: String, playback: PlaybackOptions, socketPath: String? = nil,
        durationSeconds: Double? = nil, recordPath: String? = nil, watch: Bool = false
    ) {
        self.document = document
        self.graphPath = graphPath
        self.playback = playback
        self.socketPath = socketPath
        self.durationSeconds = durationSeconds
        self.recordPath = recordPath
        self.watch = watch
    }

    /// Plays until stopped, finished or failed; returns the exit status (0, or 1 after an error on stderr).
    /// `console` makes a console for the runner when stdin and stdout are a terminal; `shouldStop` is asked at every
    /// turn of the loop (signals).
    public func run(console makeConsole: (LiveRunner) -> LiveConsole?, shouldStop: () -> Bool) throws -> Int32 {
        let isTerminal = isatty(STDOUT_FILENO) == 1
        let logger = Logger(label: "graphhost")
        // The render world's memory stays resident, so the real-time thread never waits on a page fault.
        RenderMemory.setLocking(true)
        let format = document.format
        let rate = Double(format.sampleRate)
        let recorder = try recordPath.map {
            try RecordingWriter(path: $0, sampleRate: format.sampleRate, channels: format.channels)
        }
        let session = try Self.liveSession(
            document, nominalFrames: playback.latencyFrames ?? Self.defaultQuantum, threads: playback.threads)
        // The engine is the render world's: the player hands it to the process callback while the session, owned by
        // the runner's control from here on, sends it messages. Its address crosses over; the session stays one
        // owner's.
        let engine = UnsafeMutablePointer<RenderEngine>(bitPattern: Int(bitPattern: session.engine))!
        var options = playback
        let routing = OutputRouting(session.graph.document, target: playback.target)
        options.target = routing.target
        options.rtpSinks = routing.rtpSinks
        let player = try PipeWirePlayer(engine: engine, format: format, options: options, logger: logger)
        player.commandTarget = playback.target
        player.setLiveInputs(session.graph.liveInputs.map(\.spec))
        player.setExtraOutputs(routing.extraOutputs.map { ($0.id, $0.target) })
        // The MIDI control port is claimed before the player connects, which opens every claimed port.
        let surfaces =
            surfaces + (document.midiControl.map { [MIDIControlSurface(port: $0.port)] } ?? []) + [
                PipeWireParams(player: player)
            ]
            + (document.routes == nil || self.surfaces.contains { $0 is StreamRouter }
                ? [] : [StreamRouter(document, graphName: playback.name, logger: logger)])
        let runner = LiveRunner(
            session: session, player: player, socketPath: socketPath ?? CommandServer.defaultPath(name: playback.name),
            recorder: recorder,
            options: .init(
                graphPath: graphPath, watch: watch, durationFrames: durationSeconds.map { Int($0 * rate) },
                isTerminal: isTerminal),
            logger: logger, surfaces: surfaces)
        defer { runner.close() }
        do { try runner.start() } catch {
            Self.printError("error: \(error)")
            return 1
        }
        logger.info(
            "playing \(graphPath) as '\(playback.name)' at \(format.sampleRate) Hz, \(format.channels) channels")

        let console = isTerminal && isatty(STDIN_FILENO) == 1 ? makeConsole(runner) : nil
        if let console {
            runner.showStatus = { console.setStatus($0) }
        } else if isTerminal {
            runner.showStatus = {
                print("\r\u{1B}[K" + $0, terminator: "")
                fflush(nil)
            }
        }
        console?.start()
        let outcome = runner.play(shouldStop: shouldStop)
        runner.control.cancelSwap()
        console?.stop()
        var status: Int32 = 0
        if case .failed(let message) = outcome {
            Self.printError("error: \(message)")
            status = 1
        }
        let recorded = runner.finish()
        if let recorder, let recorded {
            if let error = recorded.error {
                Self.printError("error: recording to \(recorder.path) failed: \(error)")
                status = 1
            }
            print(
                "recorded \(Format.number(Double(recorded.frames) / rate)) s to "
                    + "\(recorder.path), dropped frames \(recorded.droppedFrames)"
                    + (recorded.clippedSamples > 0 ? ", clipped \(recorded.clippedSamples) samples at full scale" : ""))
        }
        if isTerminal && console == nil { print("") }
        for (id, outputs) in runner.control.withSession({ $0.graph.pluginOutputs }).sorted(by: { $0.key < $1.key })
        where !outputs.isEmpty {
            print(
                "\(id): "
                    + outputs.sorted { $0.key < $1.key }.map { "\($0.key)=\(Format.number(Double($0.value)))" }.joined(
                        separator: " "))
        }
        let c = player.counters
        let played = runner.status
        let underruns = runner.control.withSession { played.underruns($0) }
        let largestQuantum = c.largestQuantum.load(ordering: .relaxed)
        let missedBuffers = c.missedBuffers.load(ordering: .relaxed)
        let longestCallback = c.maxBusyNanos.load(ordering: .relaxed) / 1000
        print(
            "played \(played.positionText), underruns \(underruns), xruns \(played.xruns), "
                + "largest quantum \(largestQuantum) frames, missed buffers \(missedBuffers), "
                + "longest callback \(longestCallback) µs"
        )
        return status
    }

    /// PipeWire's default quantum (default.clock.quantum): plugins are told it until the stream's first callbacks show
    /// the quantum it runs at, unless `--latency` asks for another.
    static let defaultQuantum = 1024

    /// A session for `document` that a real-time thread will render, mostly in slices of `nominalFrames`.
    static func liveSession(_ document: GraphDocument, nominalFrames: Int, threads: Int = 1) throws
        -> sending GraphSession
    {
        let session = GraphSession(graph: try CompiledGraph(document, nominalFrames: nominalFrames), threads: threads)
        session.rendersConcurrently = true
        return session
    }

    static func printError(_ text: String) {
        writeToStandardError(text + "\n")
    }
}
