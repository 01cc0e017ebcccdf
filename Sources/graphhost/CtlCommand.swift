import ArgumentParser
import FoundationEssentials
import Glibc
import GraphHost

struct CtlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ctl",
        abstract: "Send one command to a running `graphhost run` and print its JSON reply (exit 1 on an error reply).",
        discussion:
            "Commands: \(Command.usage). `subscribe` prints events (one JSON line each) until the run ends; "
            + "`subscribe meters 10` prints the meters' levels ten times a second."
    )
    @Option(help: "The control socket.") var socket: String?
    @Option(help: "The run's name (its socket is $XDG_RUNTIME_DIR/graphhost/NAME.sock).") var name: String?
    @Argument(parsing: .captureForPassthrough, help: "The command, e.g. preset eq Rock.") var command: [String]

    func run() throws {
        let path = try socketPath()
        let text = command.joined(separator: " ")
        var line = text
        let streams: Bool
        do { streams = try Subscription.parse(text)?.on ?? false } catch {
            print(ControlError.unreadable(error).reply)
            throw ExitCode(1)
        }
        if !streams {
            // The line is read here, once: an unreadable one is answered as the run would, without connecting.
            let request: Command
            do {
                request = try Command.parse(text)
            } catch {
                print(ControlError.unreadable(error).reply)
                throw ExitCode(1)
            }
            // The server resolves relative paths against its own folder; send the path as this shell sees it.
            if case .load(let file, let swap) = request, !file.hasPrefix("/") {
                line = Command.load(path: FileManager.default.currentDirectoryPath + "/" + file, swap: swap).description
            }
        }
        let fd = CommandServer.connectClient(path)
        guard fd >= 0 else {
            printError(
                "error: cannot connect to \(path): \(String(cString: strerror(errno))) (is `graphhost run` playing?)")
            throw ExitCode(1)
        }
        defer { close(fd) }
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        var reply: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1 && byte != UInt8(ascii: "\n") { reply.append(byte) }
        let answer = String(decoding: reply, as: UTF8.self)
        print(answer)
        if streams {
            var event: [UInt8] = []
            while read(fd, &byte, 1) == 1 {
                if byte == UInt8(ascii: "\n") {
                    print(String(decoding: event, as: UTF8.self))
                    fflush(nil)
                    event.removeAll()
                } else {
                    event.append(byte)
                }
            }
        }
        if (try? JSONParser.parse(answer))?["ok"]?.boolValue != true { throw ExitCode(1) }
    }

    func socketPath() throws -> String {
        if let socket { return socket }
        if let name { return CommandServer.defaultPath(name: name) }
        let dir = CommandServer.defaultFolder()
        let sockets = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter {
            $0.hasSuffix(".sock")
        }
        guard sockets.count == 1 else {
            throw ValidationError(
                sockets.isEmpty
                    ? "no running graphhost in \(dir)"
                    : "several runs (\(sockets.joined(separator: ", "))): give --name or --socket")
        }
        return dir + "/" + sockets[0]
    }
}
