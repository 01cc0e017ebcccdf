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
        subcommands: [ServiceRunCommand.self, ServiceInstallCommand.self, ServiceUninstallCommand.self]
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
    @OptionGroup var idle: IdleOption
    @OptionGroup var threads: ThreadsOption
    @Option(help: "The control socket (default: $XDG_RUNTIME_DIR/graphhost/NAME.sock).") var socket: String?
    @Option(help: "Record what is played to this .wav, .flac, .ogg or .opus file.") var record: String?
    @Option(help: "Stop after this many seconds of audio.") var duration: Double?

    func run() throws {
        LoopWakeup.installStopHandlers()
        let configuration: ServiceConfig
        do {
            configuration = try ServiceConfig.load(path: config)
        } catch let errors as GraphErrors {
            printError(errors.description)
            throw ExitCode(2)
        }
        let document = try loadGraph(configuration.fallback)
        var play = LivePlay(
            document: document, graphPath: configuration.fallback,
            playback: PlaybackOptions(
                name: name, target: nil, latencyFrames: latency, idleAfterSeconds: idle.idleAfter,
                threads: threads.threads),
            socketPath: socket, durationSeconds: duration, recordPath: record)
        let logger = Logger(label: "graphhost")
        // Routes follow the graph that plays, so the router runs whether or not the first graph has any.
        let router = StreamRouter(document, defaults: configuration.routes, graphName: name, logger: logger)
        play.surfaces += [
            router,
            OutputDeviceFollower(config: configuration, graph: configuration.fallback, router: router, logger: logger),
        ]
        let status = try play.run(console: { _ in nil }, shouldStop: { LoopWakeup.stopRequested })
        if status != 0 { throw ExitCode(status) }
    }
}

/// Runs `systemctl --user ARGUMENTS` with its output passed through; its exit status, or nil when it cannot run.
private func userSystemctl(_ arguments: [String]) -> Int32? {
    let argv = (["systemctl", "--user"] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    guard posix_spawnp(&pid, "systemctl", nil, nil, argv, environ) == 0 else { return nil }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return (status & 0x7f) == 0 ? (status >> 8) & 0xff : nil
}

/// Whether a user service manager answers (a login session's; none in a container or over plain sudo).
private var userManagerRuns: Bool {
    guard let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] else { return false }
    return FileManager.default.fileExists(atPath: runtime + "/systemd/private")
}

struct ServiceInstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Write a systemd user unit that runs `service run CONFIG` at login, and start it.",
        discussion: """
            The unit (graphhost.service in $XDG_CONFIG_HOME/systemd/user) restarts graphhost on failure and logs to \
            the journal (journalctl --user -u graphhost). Without a running user service manager it is only written.
            """
    )
    @Argument(help: "The configuration JSON file (checked first).") var config: String
    @Option(help: "The stream's node.name.") var name = "graphhost-service"

    func run() throws {
        do {
            _ = try ServiceConfig.load(path: config)
        } catch let errors as GraphErrors {
            printError(errors.description)
            throw ExitCode(2)
        }
        var executable = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &executable, executable.count - 1)
        guard length > 0 else { throw ValidationError("cannot find graphhost's own path") }
        let unit = UserUnit(
            executable: String(decoding: executable.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self),
            config: URL(fileURLWithPath: config).standardizedFileURL.path, nodeName: name)
        let path = try unit.write(into: UserUnit.folder())
        print("wrote \(path)")
        guard userManagerRuns else {
            print(
                "no user service manager answers here; in your session run: "
                    + "systemctl --user enable --now \(UserUnit.name)"
            )
            return
        }
        guard userSystemctl(["daemon-reload"]) == 0, userSystemctl(["enable", "--now", UserUnit.name]) == 0 else {
            printError("error: systemctl --user enable --now \(UserUnit.name) failed")
            throw ExitCode(1)
        }
        print("enabled and started \(UserUnit.name) (journalctl --user -u graphhost)")
    }
}

struct ServiceUninstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uninstall", abstract: "Stop and remove the systemd user unit `service install` wrote.")

    func run() throws {
        let path = UserUnit.folder() + "/" + UserUnit.name
        guard FileManager.default.fileExists(atPath: path) else {
            printError("error: no \(path) to remove")
            throw ExitCode(1)
        }
        if userManagerRuns { _ = userSystemctl(["disable", "--now", UserUnit.name]) }
        try FileManager.default.removeItem(atPath: path)
        if userManagerRuns { _ = userSystemctl(["daemon-reload"]) }
        print("removed \(path)")
    }
}
