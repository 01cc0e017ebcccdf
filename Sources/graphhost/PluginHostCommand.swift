import ArgumentParser
import GraphHost

/// The helper process an isolated plugin node runs in (started by graphhost itself, never by hand).
struct PluginHostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugin-host",
        abstract: "Host one isolated plugin node for a running graphhost (internal).",
        shouldDisplay: false)
    @Option var id: String
    @Option var node: String
    @Option var rate: Int
    @Option var channels: Int
    @Option var frames: Int
    @Option var live: Int = 0
    @Option var links: String = ""

    func run() throws {
        let status = PluginHostServer.run(
            .init(
                id: id, node: node, sampleRate: rate, channels: channels, frames: frames, live: live != 0,
                links: links))
        throw ExitCode(status)
    }
}
