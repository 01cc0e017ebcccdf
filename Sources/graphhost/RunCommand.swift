import ArgumentParser
import Foundation
import GraphHost
import Logging

/// Signals that ask `run` to stop, noted by an async-signal-safe handler.
private nonisolated(unsafe) var stopSignal: sig_atomic_t = 0

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Play a graph through PipeWire, rendering it in the stream's real-time process callback."
    )
    @Argument(help: "The graph JSON file.") var graph: String
    @Option(help: "Play to this node (node.name, object.serial or id); falls back to the default sink if missing.") var target: String?
    @Option(help: "Requested latency in frames (node.latency).") var latency: Int?
    @Option(help: "Stop after this many seconds of audio.") var duration: Double?
    @Option(help: "The stream's node.name (default: the graph file's name).") var name: String?
    @Option(help: "The control socket (default: $XDG_RUNTIME_DIR/graphhost/NAME.sock).") var socket: String?
    @Option(help: "Record what is played (every live change included) to this WAV or FLAC file.") var record: String?
    @Flag(help: "Reload the graph file when it changes (a crossfaded swap; a broken edit is reported and ignored).") var watch = false

    func run() throws {
        let doc = try loadGraph(graph)
        let isTTY = isatty(STDOUT_FILENO) == 1
        let logger = Logger(label: "graphhost")
        // Keep every page resident so the real-time thread never waits on a page fault.
        if mlockall(MCL_CURRENT | MCL_FUTURE) != 0 {
            logger.warning("could not lock memory (mlockall: \(String(cString: strerror(errno)))); the render thread may wait on page faults (raise RLIMIT_MEMLOCK, e.g. LimitMEMLOCK or limits.conf)")
        }
        let recorder = try record.map { try RecordingWriter(path: $0, sampleRate: doc.format.sampleRate, channels: doc.format.channels) }
        let session = GraphSession(graph: try CompiledGraph(doc))
        let rate = Double(doc.format.sampleRate)
        let nodeName = name ?? URL(fileURLWithPath: graph).deletingPathExtension().lastPathComponent
        let player = try PipeWirePlayer(session: session, options: PlaybackOptions(name: nodeName, target: target, latencyFrames: latency), logger: logger)
        let runner = LiveRunner(session: session, player: player, socketPath: socket ?? CommandServer.defaultPath(name: nodeName), recorder: recorder,
                                options: .init(graphPath: graph, watch: watch, durationFrames: duration.map { Int($0 * rate) }, isTerminal: isTTY),
                                logger: logger)
        defer { runner.close() }
        do { try runner.start() } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        signal(SIGPIPE, SIG_IGN)
        signal(SIGINT) { _ in stopSignal = 1 }
        signal(SIGTERM) { _ in stopSignal = 1 }
        logger.info("playing \(graph) as '\(nodeName)' at \(doc.format.sampleRate) Hz, \(doc.format.channels) channels")

        let control = runner.control
        let console = isTTY && isatty(STDIN_FILENO) == 1
            ? Console(handle: control.handle, complete: { line in control.withSession { CommandCompletion(session: $0).complete(line) } },
                      onEnd: { runner.requestStop() })
            : nil
        if let console {
            runner.showStatus = { console.setStatus($0) }
        } else if isTTY {
            runner.showStatus = { print("\r\u{1B}[K" + $0, terminator: ""); fflush(stdout) }
        }
        console?.start()
        let outcome = runner.play(shouldStop: { stopSignal != 0 })
        console?.stop()
        var exitCode: Int32 = 0
        if case .failed(let message) = outcome {
            printError("error: \(message)")
            exitCode = 1
        }
        let recorded = runner.finish()
        if let recorder, let recorded {
            if let error = recorded.error { printError("error: recording to \(recorder.path) failed: \(error)"); exitCode = 1 }
            print("recorded \(Format.number(Double(recorded.frames) / rate)) s to \(recorder.path), dropped frames \(recorded.droppedFrames)")
        }
        if isTTY && console == nil { print("") }
        for (id, outputs) in session.graph.pluginOutputs.sorted(by: { $0.key < $1.key }) where !outputs.isEmpty {
            print("\(id): " + outputs.sorted { $0.key < $1.key }.map { "\($0.key)=\(Format.number(Double($0.value)))" }.joined(separator: " "))
        }
        let c = player.counters, status = runner.status
        print("played \(status.positionText), underruns \(control.withSession { _ in status.underruns }), xruns \(status.xruns), largest quantum \(c.largestQuantum.load(ordering: .relaxed)) frames, missed buffers \(c.missedBuffers.load(ordering: .relaxed)), longest callback \(c.maxBusyNanos.load(ordering: .relaxed) / 1000) µs")
        if exitCode != 0 { throw ExitCode(exitCode) }
    }
}
