import Foundation
import GraphHost

/// The interactive console of `graphhost run` on a terminal: a status line above a prompt with line editing
/// (arrows, Home/End, Ctrl-A/E/U/W, Backspace), history (Up/Down) and Tab completion. Replies print above.
final class Console {
    private let handle: (String) -> String
    private let complete: (String) -> [String]
    private let onEnd: () -> Void
    private let lock = NSLock()
    private var saved = termios()
    private var line: [Character] = []
    private var cursor = 0
    private var history: [String] = []
    private var historyIndex = 0
    private var status = ""
    private var thread: Thread?

    static let prompt = "> "

    /// `handle` answers a line with a JSON reply; `onEnd` runs on Ctrl-C, Ctrl-D or `quit`.
    init(handle: @escaping (String) -> String, complete: @escaping (String) -> [String], onEnd: @escaping () -> Void) {
        self.handle = handle
        self.complete = complete
        self.onEnd = onEnd
    }

    func start() {
        tcgetattr(STDIN_FILENO, &saved)
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG)
        raw.c_cc.6 = 1   // VMIN
        raw.c_cc.5 = 0   // VTIME
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        lock.withLock { write("\n"); redrawLocked() }
        let thread = Thread { [weak self] in self?.readLoop() }
        thread.name = "graphhost-console"
        thread.start()
        self.thread = thread
    }

    /// Restores the terminal.
    func stop() {
        lock.withLock {
            write("\r\u{1B}[K")
            tcsetattr(STDIN_FILENO, TCSANOW, &saved)
        }
    }

    func setStatus(_ text: String) {
        lock.withLock {
            status = text
            redrawLocked()
        }
    }

    /// Prints text above the status line.
    func print(_ text: String) {
        lock.withLock {
            write("\u{1B}[1A\r\u{1B}[K" + text.replacingOccurrences(of: "\n", with: "\r\n") + "\r\n\n")
            redrawLocked()
        }
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(text.data(using: .utf8)!)
    }

    /// Status on the line above, prompt and input on this one, the cursor where the user edits.
    private func redrawLocked() {
        let back = line.count - cursor
        write("\u{1B}[1A\r\u{1B}[K" + status + "\n\r\u{1B}[K" + Self.prompt + String(line) + (back > 0 ? "\u{1B}[\(back)D" : ""))
    }

    private func readByte() -> UInt8? {
        var byte: UInt8 = 0
        return read(STDIN_FILENO, &byte, 1) == 1 ? byte : nil
    }

    private func readLoop() {
        var pending: [UInt8] = []
        while let byte = readByte() {
            switch byte {
            case 3: onEnd(); return                               // Ctrl-C
            case 4 where line.isEmpty: onEnd(); return            // Ctrl-D
            case 13, 10: submit()
            case 9: tab()
            case 127, 8: edit { if cursor > 0 { line.remove(at: cursor - 1); cursor -= 1 } }
            case 1: edit { cursor = 0 }
            case 5: edit { cursor = line.count }
            case 21: edit { line.removeFirst(cursor); cursor = 0 }
            case 23: edit {
                var start = cursor
                while start > 0 && line[start - 1] == " " { start -= 1 }
                while start > 0 && line[start - 1] != " " { start -= 1 }
                line.removeSubrange(start..<cursor)
                cursor = start
            }
            case 27: escape()
            default:
                pending.append(byte)
                // Collect a whole UTF-8 character before inserting it.
                if let text = String(bytes: pending, encoding: .utf8) {
                    pending.removeAll()
                    edit { for c in text where !c.isNewline { line.insert(c, at: cursor); cursor += 1 } }
                } else if pending.count >= 4 {
                    pending.removeAll()
                }
            }
        }
    }

    private func edit(_ change: () -> Void) {
        lock.withLock {
            change()
            redrawLocked()
        }
    }

    private func escape() {
        guard let b1 = readByte(), b1 == UInt8(ascii: "[") || b1 == UInt8(ascii: "O"), let b2 = readByte() else { return }
        switch b2 {
        case UInt8(ascii: "A"): recall(-1)
        case UInt8(ascii: "B"): recall(1)
        case UInt8(ascii: "C"): edit { cursor = min(line.count, cursor + 1) }
        case UInt8(ascii: "D"): edit { cursor = max(0, cursor - 1) }
        case UInt8(ascii: "H"): edit { cursor = 0 }
        case UInt8(ascii: "F"): edit { cursor = line.count }
        case UInt8(ascii: "1"), UInt8(ascii: "4"), UInt8(ascii: "3"):
            guard readByte() == UInt8(ascii: "~") else { return }
            if b2 == UInt8(ascii: "1") { edit { cursor = 0 } }
            else if b2 == UInt8(ascii: "4") { edit { cursor = line.count } }
            else { edit { if cursor < line.count { line.remove(at: cursor) } } }
        default: break
        }
    }

    private func recall(_ step: Int) {
        edit {
            let index = historyIndex + step
            guard index >= 0, index <= history.count else { return }
            historyIndex = index
            line = index == history.count ? [] : Array(history[index])
            cursor = line.count
        }
    }

    private func tab() {
        let before = lock.withLock { String(line[..<cursor]) }
        let choices = complete(before)
        if choices.count == 1 {
            edit { line = Array(choices[0]) + line[cursor...]; cursor = choices[0].count }
        } else if choices.count > 1 {
            let common = choices.dropFirst().reduce(choices[0]) { String($0.commonPrefix(with: $1)) }
            if common.count > before.count {
                edit { line = Array(common) + line[cursor...]; cursor = common.count }
            } else {
                let words = choices.map { $0.trimmingCharacters(in: .whitespaces).split(separator: " ").last.map(String.init) ?? $0 }
                print(words.joined(separator: "  "))
            }
        }
    }

    private func submit() {
        let text = lock.withLock { () -> String in
            let text = String(line).trimmingCharacters(in: .whitespaces)
            line = []
            cursor = 0
            if !text.isEmpty && history.last != text { history.append(text) }
            historyIndex = history.count
            return text
        }
        guard !text.isEmpty else { return edit {} }
        print(Self.prompt + text)
        print(LiveControl.describe(reply: handle(text)))
        if text == "quit" { onEnd() }
    }
}
