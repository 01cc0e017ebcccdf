import ArgumentParser
import FoundationEssentials
import Glibc
import GraphHost
import Logging

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Play a graph through PipeWire, rendering it in the stream's real-time process callback."
    )
    @Argument(help: "The graph JSON file.") var graph: String
    @Option(help: "Play to this node (node.name, object.serial or id); falls back to the default sink if missing.")
    var target: String?
    @Option(help: "Requested latency in frames (node.latency).") var latency: Int?
    @OptionGroup var idle: IdleOption
    @OptionGroup var threads: ThreadsOption
    @Option(help: "Stop after this many seconds of audio.") var duration: Double?
    @Option(help: "The stream's node.name (default: the graph file's name).") var name: String?
    @Option(help: "The control socket (default: $XDG_RUNTIME_DIR/graphhost/NAME.sock).") var socket: String?
    @Option(help: "Record what is played (every live change included) to this .wav, .flac, .ogg or .opus file.")
    var record: String?
    @Flag(help: "Reload the graph file when it changes (a crossfaded swap; a broken edit is reported and ignored).")
    var watch = false
    @Option(
        help:
            "Take OSC control messages (/graphhost/...) on this UDP port (0: any free port, logged). Off unless given.")
    var oscPort: Int?
    @Option(help: "The address the OSC port binds to (0.0.0.0: every interface).") var oscHost = "127.0.0.1"
    @Option(
        help: ArgumentHelp(
            "Serve the page in the browser on [ADDR:]PORT (0: any free port; 127.0.0.1 unless ADDR is given); it "
                + "prints the page's URL with its token. Off unless given.", valueName: "[ADDR:]PORT"))
    var http: String?
    @Flag(help: "Do not offer MPRIS (org.mpris.MediaPlayer2.graphhost.NAME) on the session bus.") var noMpris = false
    @Flag(help: "Run every plugin node in a helper process (as \"isolate\": true does for one).")
    var isolatePlugins = false

    func validate() throws {
        if let oscPort, !(0...65535).contains(oscPort) { throw ValidationError("--osc-port \(oscPort) is not 0…65535") }
        if let http, WebServer.parseAddress(http) == nil {
            throw ValidationError("--http \(http) is not [ADDR:]PORT with a port 0…65535")
        }
    }

    func run() throws {
        PluginIsolation.everyPlugin = isolatePlugins
        LoopWakeup.installStopHandlers()
        let nodeName = name ?? URL(fileURLWithPath: graph).deletingPathExtension().lastPathComponent
        var play = LivePlay(
            document: try loadGraph(graph), graphPath: graph,
            playback: PlaybackOptions(
                name: nodeName, target: target, latencyFrames: latency, idleAfterSeconds: idle.idleAfter,
                threads: threads.threads),
            socketPath: socket, durationSeconds: duration, recordPath: record, watch: watch)
        if let oscPort { play.surfaces.append(OSCServer(host: oscHost, port: oscPort)) }
        if let http, let (host, port) = WebServer.parseAddress(http) {
            play.surfaces.append(WebServer(host: host, port: port))
        }
        if !noMpris { play.surfaces.append(MPRISService(name: nodeName, logger: Logger(label: "graphhost"))) }
        let status = try play.run(
            console: { runner in
                let control = runner.control
                return Console(
                    answer: { line in
                        ReplyText.answer(line, control: control)
                            + (line == "help"
                                ? "\nin this console: top (the nodes and their levels; a key leaves)" : "")
                    },
                    complete: { line in control.withSession { CommandCompletion(session: $0).complete(line) } },
                    top: { columns, rows in TopView.read(control)?.lines(columns: columns, rows: rows) ?? [] },
                    onEnd: { control.requestQuit() })
            }, shouldStop: { LoopWakeup.stopRequested })
        if status != 0 { throw ExitCode(status) }
    }
}

extension Console: LiveConsole {}
