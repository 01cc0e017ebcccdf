import FoundationEssentials
import Glibc

/// The systemd user unit that starts `graphhost service run CONFIG` at login: restarted on failure, its log in the
/// journal. Written to `$XDG_CONFIG_HOME/systemd/user` (default `~/.config/systemd/user`).
public struct UserUnit: Sendable, Equatable {
    public static let name = "graphhost.service"
    /// The service idles like a sink after this many quiet seconds (`--idle-after`): nothing runs while nothing plays.
    public static let idleAfterSeconds = 5

    /// The graphhost binary and the configuration, both absolute.
    public var executable: String
    public var config: String
    public var nodeName: String

    public init(executable: String, config: String, nodeName: String) {
        self.executable = executable
        self.config = config
        self.nodeName = nodeName
    }

    /// The folder user units go in.
    public static func folder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let base =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? "/root") + "/.config")
        return base + "/systemd/user"
    }

    /// The command the unit runs.
    public var command: String {
        "\(Self.quoted(executable)) service run \(Self.quoted(config)) --name \(Self.quoted(nodeName)) "
            + "--idle-after \(Self.idleAfterSeconds)"
    }

    public var text: String {
        """
        [Unit]
        Description=graphhost system-wide effects (\(config.replacing("%", with: "%%")))
        After=pipewire.service wireplumber.service
        Wants=pipewire.service

        [Service]
        Type=simple
        ExecStart=\(command)
        Restart=on-failure
        RestartSec=2
        StandardOutput=journal
        StandardError=journal
        SyslogIdentifier=graphhost

        [Install]
        WantedBy=default.target

        """
    }

    /// A word of ExecStart: quoted when it holds spaces, quotes, backslashes or the specifier sign.
    static func quoted(_ word: String) -> String {
        guard word.contains(where: { " \t\"'\\%$".contains($0) }) else { return word }
        var escaped = ""
        for c in word {
            switch c {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "%": escaped += "%%"
            case "$": escaped += "$$"
            default: escaped.append(c)
            }
        }
        return "\"\(escaped)\""
    }

    /// Writes the unit into `folder`, made if missing; returns its path.
    public func write(into folder: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/" + Self.name
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
            throw ServiceUnitError(message: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        return path
    }
}

/// A unit that could not be written or removed.
public struct ServiceUnitError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
