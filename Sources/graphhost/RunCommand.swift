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
        if mlockall(MCL_CURRENT | MCL_FUTURE) != 0 { logger.debug("mlockall failed; pages may fault in the render thread") }
        let recorder = try record.map { try RecordingWriter(path: $0, sampleRate: doc.format.sampleRate, channels: doc.format.channels) }
        // Deferred actions run in reverse: the stream stops first, then the socket, then the session's memory is freed.
        let session = GraphSession(graph: try CompiledGraph(doc))
        defer { session.close() }
        let rate = Double(doc.format.sampleRate)
        let nodeName = name ?? URL(fileURLWithPath: graph).deletingPathExtension().lastPathComponent
        let player = try PipeWirePlayer(session: session, options: PlaybackOptions(name: nodeName, target: target, latencyFrames: latency), logger: logger)
        let quitRequested = NSLock()
        var quit = false
        let status = PlaybackStatus(session: session, player: player, recorder: recorder, sampleRate: rate)
        let control = LiveControl(session: session, status: { status.dictionary }, quit: { quitRequested.withLock { quit = true } })
        // The socket comes first: when another run holds it, nothing has started yet.
        let server = CommandServer(path: socket ?? CommandServer.defaultPath(name: nodeName), handler: control.handle)
        control.publish = { [weak server] event in server?.publish(event) }
        do { try server.start() } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        defer { server.stop() }
        logger.info("control socket: \(server.path)")
        player.setRecordTap(recorder?.tap)
        recorder?.start()
        defer { player.stop() }
        session.graph.start()
        do {
            try player.connect()
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        signal(SIGPIPE, SIG_IGN)
        signal(SIGINT) { _ in stopSignal = 1 }
        signal(SIGTERM) { _ in stopSignal = 1 }
        logger.info("playing \(graph) as '\(nodeName)' at \(doc.format.sampleRate) Hz, \(doc.format.channels) channels")

        let durationFrames = duration.map { Int($0 * rate) }
        let console = isTTY && isatty(STDIN_FILENO) == 1
            ? Console(handle: control.handle, complete: { line in control.withSession { CommandCompletion(session: $0).complete(line) } },
                      onEnd: { quitRequested.withLock { quit = true } })
            : nil
        console?.start()
        defer { console?.stop() }
        let watchedPath = URL(fileURLWithPath: graph).standardizedFileURL.path
        var watchedStamp = Self.modificationStamp(watchedPath)
        if watch { logger.info("watching \(graph) for changes") }
        var nextWatch = Date()
        var reconnection = Reconnection()
        var nextStatus = Date()
        var reportedXruns = 0, reportedUnderruns = 0
        var reportedTitles: [String: String] = [:]
        var reportedDamage: [String: StreamDamage] = [:]
        var reportedOverruns = 0, reportedDropped = 0
        var exitCode: Int32 = 0
        while true {
            usleep(10_000)
            if stopSignal != 0 || quitRequested.withLock({ quit }) { logger.info("stopping"); break }
            if let error = player.streamError {
                printError("error: PipeWire stream: \(error)")
                exitCode = 1
                break
            }
            if player.disconnected || player.noSink {
                if player.disconnected && !reconnection.isLost {
                    logger.warning("the PipeWire daemon went away at \(status.positionText); keeping the graph and reconnecting")
                } else if player.noSink && !reconnection.isWaitingForSink {
                    logger.warning("PipeWire has no sink for the stream yet (\(PipeWirePlayer.noSinkMessage)); retrying for up to \(Format.number(Reconnection.noSinkLimit)) s")
                }
                switch reconnection.lost(noSink: !player.disconnected) {
                case .wait: break
                case .giveUp:
                    printError("error: PipeWire stream: no sink appeared within \(Format.number(Reconnection.noSinkLimit)) s (\(PipeWirePlayer.noSinkMessage)); start a session manager (wireplumber) with a sink, or give --target")
                    exitCode = 1
                case .retry:
                    if player.noSink { logger.info("asking PipeWire for a sink again (next attempt in \(Format.number(reconnection.backoff)) s)") }
                    if !player.reconnect() { logger.debug("PipeWire is not back yet; next attempt in \(Format.number(reconnection.backoff)) s") }
                }
                if exitCode != 0 { break }
                continue
            }
            if reconnection.isLost && player.streaming {
                let gap = reconnection.recovered()
                logger.info("reconnected to PipeWire; continuing from \(status.positionText) after a gap of \(String(format: "%.2f", gap)) s")
                server.publish(["event": "reconnected", "position": status.seconds, "gapSeconds": gap])
            }
            control.withSession { $0.collectRetired() }
            if watch && Date() >= nextWatch {
                nextWatch = Date().addingTimeInterval(0.5)
                let stamp = Self.modificationStamp(watchedPath)
                if stamp != watchedStamp {
                    watchedStamp = stamp
                    let reply = control.handle("load " + watchedPath)
                    if reply.contains("\"ok\":true") {
                        logger.info("\(graph) changed: swapped to the new version")
                    } else {
                        logger.error("\(graph) changed but was not loaded; still playing the previous version: \(Console.describe(reply: reply))")
                    }
                    server.publish(["event": "reload", "ok": reply.contains("\"ok\":true")])
                }
            }
            let streams = control.withSession { $0.graph.streams }
            if let failed = streams.first(where: { $0.failure != nil }) {
                printError("error: stream '\(failed.id)': \(failed.failure!)")
                exitCode = 1
                break
            }
            for stream in streams {
                guard let title = stream.network?.title, !title.isEmpty, reportedTitles[stream.id] != title else { continue }
                reportedTitles[stream.id] = title
                server.publish(["event": "title", "node": stream.id, "title": title, "position": status.seconds])
            }
            for stream in streams {
                let damage = stream.damage
                guard damage != reportedDamage[stream.id] ?? StreamDamage() else { continue }
                reportedDamage[stream.id] = damage
                if !isTTY { logger.warning("stream '\(stream.id)': damaged MPEG data, \(damage.silencedFrames) frames silenced, \(damage.skippedBytes) bytes skipped") }
                server.publish(["event": "damaged", "node": stream.id, "silencedFrames": damage.silencedFrames,
                                "skippedBytes": damage.skippedBytes, "position": status.seconds])
            }
            let frames = player.counters.frames.load(ordering: .relaxed)
            if let durationFrames, frames >= durationFrames { break }
            if durationFrames == nil && !streams.isEmpty && streams.allSatisfy({ $0.finished }) {
                logger.info("every stream has finished")
                server.publish(["event": "finished", "position": status.seconds])
                break
            }
            if Date() >= nextStatus {
                nextStatus = Date().addingTimeInterval(0.25)
                control.withSession { $0.drainLogs() }
                if let console {
                    console.setStatus(control.withSession { _ in status.line })
                } else if isTTY {
                    print("\r\u{1B}[K" + control.withSession { _ in status.line }, terminator: "")
                    fflush(stdout)
                }
                let overruns = player.counters.overruns.load(ordering: .acquiring)
                if overruns > reportedOverruns {
                    reportedOverruns = overruns
                    let c = player.counters
                    let node = control.withSession { $0.graph.nodeID(kernelAddress: c.slowKernel.load(ordering: .relaxed)) } ?? "?"
                    let took = Double(c.slowNanos.load(ordering: .relaxed)) / 1e6, budget = Double(c.budgetNanos.load(ordering: .relaxed)) / 1e6
                    logger.warning("a callback overran its quantum (\(overruns) so far): node '\(node)' took \(String(format: "%.2f", took)) ms of \(String(format: "%.2f", budget)) ms")
                    server.publish(["event": "overrun", "node": node, "milliseconds": took, "count": overruns])
                }
                let (x, u) = control.withSession { _ in (status.xruns, status.underruns) }
                if x > reportedXruns {
                    if !isTTY { logger.warning("xruns: \(x)") }
                    server.publish(["event": "xruns", "count": x, "position": status.seconds])
                }
                if u > reportedUnderruns {
                    if !isTTY { logger.warning("underruns: \(u)") }
                    server.publish(["event": "underruns", "count": u, "position": status.seconds])
                }
                (reportedXruns, reportedUnderruns) = (x, u)
                if let dropped = recorder?.droppedFrames, dropped > reportedDropped {
                    reportedDropped = dropped
                    logger.warning("recording: \(dropped) frames dropped so far (the writer fell behind)")
                    server.publish(["event": "recordingDropped", "frames": dropped, "position": status.seconds])
                }
            }
        }
        player.stop()
        console?.stop()
        session.drainLogs()
        if let recorder {
            let recorded = recorder.finish()
            if let error = recorded.error { printError("error: recording to \(recorder.path) failed: \(error)"); exitCode = 1 }
            print("recorded \(Format.number(Double(recorded.frames) / rate)) s to \(recorder.path), dropped frames \(recorded.droppedFrames)")
        }
        if isTTY && console == nil { print("") }
        for (id, outputs) in session.graph.pluginOutputs.sorted(by: { $0.key < $1.key }) where !outputs.isEmpty {
            print("\(id): " + outputs.sorted { $0.key < $1.key }.map { "\($0.key)=\(Format.number(Double($0.value)))" }.joined(separator: " "))
        }
        let c = player.counters
        print("played \(status.positionText), underruns \(control.withSession { _ in status.underruns }), xruns \(status.xruns), largest quantum \(c.largestQuantum.load(ordering: .relaxed)) frames, missed buffers \(c.missedBuffers.load(ordering: .relaxed)), longest callback \(c.maxBusyNanos.load(ordering: .relaxed) / 1000) µs")
        if exitCode != 0 { throw ExitCode(exitCode) }
    }
}

extension RunCommand {
    /// The file's modification time and size, to notice edits.
    static func modificationStamp(_ path: String) -> [Double] {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return [] }
        return [(attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0, Double((attributes[.size] as? Int) ?? 0)]
    }
}

/// The numbers shown in `run`'s status line and summary.
struct PlaybackStatus {
    let session: GraphSession
    var graph: CompiledGraph { session.graph }
    let player: PipeWirePlayer
    let recorder: RecordingWriter?
    let sampleRate: Double

    var seconds: Double { Double(player.counters.frames.load(ordering: .relaxed)) / sampleRate }
    var positionText: String { String(format: "%.2f s", seconds) }
    var underruns: Int { graph.streams.reduce(0) { $0 + $1.counters.underruns.load(ordering: .relaxed) } }
    var xruns: Int { player.counters.xruns.load(ordering: .relaxed) }

    /// The status as a JSON-ready dictionary (the `status` command).
    var dictionary: [String: Any] {
        var status: [String: Any] = [
            "position": seconds, "underruns": underruns, "xruns": xruns,
            "quantum": player.counters.quantum.load(ordering: .relaxed),
            "streamsFinished": graph.streams.map(\.finished),
            "streams": graph.streams.map { s -> [String: Any] in
                var entry: [String: Any] = ["id": s.id, "state": s.state.rawValue, "bufferFill": Double(s.ring.index.readable()) / Double(s.ring.capacityFrames),
                                            "underruns": s.counters.underruns.load(ordering: .relaxed),
                                            "silencedFrames": s.damage.silencedFrames, "skippedBytes": s.damage.skippedBytes]
                if let n = s.network {
                    entry["bytesLoaded"] = n.bytesLoaded
                    if let total = n.totalBytes { entry["totalBytes"] = total }
                    if let title = n.title, !title.isEmpty { entry["title"] = title }
                    entry["reconnects"] = n.reconnects
                }
                return entry
            },
            "pluginOutputs": graph.pluginOutputs,
            "silencedSlices": graph.silencedSlices,
            "overruns": player.counters.overruns.load(ordering: .relaxed),
            "chains": Dictionary(uniqueKeysWithValues: graph.document.chainNodes.map { ($0.id, $0.chain) }),
            "applied": ["messages": session.appliedMessages.load(ordering: .acquiring), "nanos": session.appliedNanos.load(ordering: .relaxed)],
        ]
        if let recorder {
            status["recording"] = ["path": recorder.path, "seconds": Double(recorder.framesWritten) / sampleRate, "droppedFrames": recorder.droppedFrames]
        }
        return status
    }

    var line: String {
        let fill = graph.streams.first.map { s in 100 * s.ring.index.readable() / s.ring.capacityFrames } ?? 0
        let busy = Double(player.counters.busyNanos.load(ordering: .relaxed))
        let budget = Double(max(1, player.counters.budgetNanos.load(ordering: .relaxed)))
        let quantum = player.counters.quantum.load(ordering: .relaxed)
        var network = ""
        if let s = graph.streams.first, let n = s.network {
            let loaded = String(format: "%.1f", Double(n.bytesLoaded) / 1e6) + (n.totalBytes.map { String(format: "/%.1f", Double($0) / 1e6) } ?? "") + " MB"
            network = " | \(s.state.rawValue) \(loaded)" + (n.title.flatMap { $0.isEmpty ? nil : " | ♪ \($0)" } ?? "")
        }
        return String(format: "%@ | buffer %d%% | underruns %d | xruns %d | CPU %.1f%% of %d-frame quantum",
                      positionText, fill, underruns, xruns, 100 * busy / budget, quantum) + network
    }
}
