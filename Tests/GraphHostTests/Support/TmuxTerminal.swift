import Foundation

/// A command in a detached tmux session on a private tmux server: a real terminal that a test types into
/// (`send-keys`) and reads back (`capture-pane`).
final class TmuxTerminal {
    /// The server's socket, in the tests' folder.
    let socket = TestSupport.directory.appendingPathComponent("tmux-\(UUID().uuidString.prefix(8))").path
    let environment: [String: String]
    private let statusPath: String

    /// Starts `command` on a `width` x `height` terminal. The screen stays after the command exits; a shell notes
    /// the exit status in a file (tmux 3.3a does not always reap a pane's process, so `pane_dead_status` may stay
    /// empty).
    init(_ command: [String], environment: [String: String], width: Int = 80, height: Int = 24) throws {
        self.environment = environment
        statusPath = socket + ".status"
        try tmux(
            [
                "new-session", "-d", "-x", "\(width)", "-y", "\(height)", "-s", "console",
                "/bin/sh", "-c", "\"$@\"; echo $? > \"$0\"", statusPath,
            ] + command
                + [";", "set-option", "-w", "remain-on-exit", "on"])
    }

    /// Stops the server and whatever still runs in it.
    func close() {
        _ = try? tmux(["kill-server"])
        try? FileManager.default.removeItem(atPath: socket)
    }

    /// Runs a tmux command and returns its output. tmux starts from bash with every inherited descriptor above 2
    /// closed: Foundation's Process waits until a child and its descendants have closed the descriptors it hands
    /// them, and the server that the first command starts would keep them.
    @discardableResult
    func tmux(_ arguments: [String]) throws -> String {
        let script =
            "for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ \"$fd\" -gt 2 ] && eval \"exec $fd>&-\" 2>/dev/null; done; "
            + "exec /usr/bin/tmux \"$@\""
        let r = try TestSupport.execute(
            URL(fileURLWithPath: "/bin/bash"), ["-c", script, "tmux", "-S", socket] + arguments,
            environment: environment)
        guard r.status == 0 else {
            throw TestSupport.ToolFailure(
                description: "tmux \(arguments.joined(separator: " ")): \(String(decoding: r.err, as: UTF8.self))")
        }
        return String(decoding: r.out, as: UTF8.self)
    }

    /// Keys by tmux name ("Tab", "Enter", "Left", "C-c").
    func press(_ keys: String...) throws {
        try tmux(["send-keys", "-t", "console"] + keys)
    }

    /// Text typed as it is.
    func type(_ text: String) throws {
        try tmux(["send-keys", "-t", "console", "-l", text])
    }

    func resize(width: Int) throws {
        try tmux(["resize-window", "-t", "console", "-x", "\(width)"])
    }

    /// The screen's lines, wrapped lines joined unless `rows`, trailing blanks removed.
    func screen(rows: Bool = false) throws -> [String] {
        let lines = try tmux(["capture-pane", "-p", "-t", "console"] + (rows ? [] : ["-J"])).split(
            separator: "\n", omittingEmptySubsequences: false)
        return lines.map { String($0.reversed().drop(while: { $0 == " " }).reversed()) }
    }

    func text() -> String {
        ((try? screen()) ?? []).joined(separator: "\n")
    }

    /// The cursor's column and row.
    func cursor() throws -> (x: Int, y: Int) {
        let values = try tmux(["display-message", "-p", "-t", "console", "#{cursor_x} #{cursor_y}"])
            .split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard values.count == 2 else { throw TestSupport.ToolFailure(description: "no cursor position") }
        return (values[0], values[1])
    }

    /// The command's exit status once it has exited, else nil.
    func exitStatus() -> Int32? {
        (try? String(contentsOfFile: statusPath, encoding: .utf8)).flatMap {
            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// Waits until the screen satisfies `condition`; false after `timeout` seconds.
    func waitForScreen(timeout: TimeInterval = 30, _ condition: ([String]) -> Bool) -> Bool {
        TestSupport.waitUntil(timeout: timeout) { (try? screen()).map(condition) ?? false }
    }
}
