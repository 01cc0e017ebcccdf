import ArgumentParser
import FoundationEssentials
import Glibc
import GraphHost
import Logging

/// `graphhost service`: system-wide effects that follow the output device.
struct ServiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "service",
        abstract: "Run graphs for output devices: the graph mapped to the default sink plays, and follows it.",
        subcommands: [ServiceRunCommand.self]
    )
}

struct ServiceRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Play the graph a configuration maps to the default sink; swap graphs when the default sink changes.",
        discussion: """
            The configuration: { "devices": [ { "match": { "node.name": "alsa_output.usb-*" }, "graph": \
            "headphones.json" } ], "fallback": "speakers.json" }. It is reloaded when it is saved; a broken edit is \
            logged and the running configuration kept.
            """
    )
    @Argument(help: "The configuration JSON file.") var config: String
    @Option(help: "The stream's node.name.") var name = "graphhost-service"
    @Option(help: "Requested latency in frames (node.latency).") var latency: Int?
    @Option(help: "The control socket (default: $XDG_RUNTIME_DIR/graphhost/NAME.sock).") var socket: String?
    @Option(help: "Record what is played to this .wav, .flac, .ogg or .opus file.") var record: String?
    @Option(help: "Stop after this many seconds of audio.") var duration: Double?

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        signal(SIGINT) { _ in stopSignal = 1 }
        signal(SIGTERM) { _ in stopSignal = 1 }
        let configuration: ServiceConfig
        do {
            configuration = try ServiceConfig.load(path: config)
        } catch let errors as GraphErrors {
            printError(errors.description)
            throw ExitCode(2)
        }
        var play = LivePlay(
            document: try loadGraph(configuration.fallback), graphPath: configuration.fallback,
            playback: PlaybackOptions(name: name, target: nil, latencyFrames: latency),
            socketPath: socket, durationSeconds: duration, recordPath: record)
        play.surfaces.append(
            OutputDeviceFollower(
                config: configuration, graph: configuration.fallback, logger: Logger(label: "graphhost")))
        let status = try play.run(console: { _ in nil }, shouldStop: { stopSignal != 0 })
        if status != 0 { throw ExitCode(status) }
    }
}
