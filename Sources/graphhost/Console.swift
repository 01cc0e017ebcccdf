import CEditGlue
import Dispatch
import FoundationEssentials
import Glibc
import GraphHost
import Synchronization

/// Set by the SIGWINCH handler, which also wakes the console thread through `consoleWakeDescriptor`.
private nonisolated(unsafe) var terminalResized: sig_atomic_t = 0
private nonisolated(unsafe) var consoleWakeDescriptor: Int32 = -1

/// The interactive console of `graphhost run` on a terminal: a status line above a prompt edited with libedit
/// (emacs keys, Up/Down through a history kept in `$XDG_STATE_HOME/graphhost/history`, Tab completion).
/// Replies, completion lists and whatever is written to standard error print above the status line, and the line
/// being edited is redrawn below them.
///
/// libedit is not thread-safe, so only the console thread calls it: a poll() loop that feeds it one key at a time
/// (unbuffered mode) and wakes up for status lines handed over by other threads, standard error (a pipe while the
/// console runs) and terminal resizes.
final class Console {
    /// How long `stop` waits for the console thread.
    static let stopTimeout = DispatchTimeInterval.milliseconds(500)

    private let answer: @Sendable (String) -> String
    private let complete: @Sendable (String) -> [String]
    private let top: @Sendable (_ columns: Int, _ rows: Int) -> [String]
    private let onEnd: @Sendable () -> Void
    private var shared: ConsoleShared?
    private var savedError: Int32 = -1
    private var savedTerminal = termios()

    /// `answer` answers a line in words (or with the socket's JSON after `--json`); `complete` lists the
    /// whole lines a line's start can become; `top` draws the `top` screen at a size;
    /// `onEnd` runs on Ctrl-C, Ctrl-D on an empty line or `quit`.
    init(
        answer: @escaping @Sendable (String) -> String, complete: @escaping @Sendable (String) -> [String],
        top: @escaping @Sendable (_ columns: Int, _ rows: Int) -> [String], onEnd: @escaping @Sendable () -> Void
    ) {
        self.answer = answer
        self.complete = complete
        self.top = top
        self.onEnd = onEnd
    }

    func start() {
        // libedit reads and measures characters through the C library's locale: UTF-8, whatever the environment says.
        setlocale(LC_CTYPE, "")
        if String(cString: nl_langinfo(nl_item(CODESET))) != "UTF-8" { setlocale(LC_CTYPE, "C.UTF-8") }
        tcgetattr(STDIN_FILENO, &savedTerminal)
        let wakePipe = ConsoleEditor.makePipe()
        consoleWakeDescriptor = wakePipe.write
        // Standard error goes into a pipe whose lines the console thread prints above the prompt. Its ends never
        // block: a thread logging while the console thread runs a command loses text beyond the pipe's 64 KiB
        // rather than waiting.
        let error = ConsoleEditor.makePipe()
        fflush(nil)
        savedError = dup(STDERR_FILENO)
        dup2(error.write, STDERR_FILENO)
        close(error.write)
        signal(SIGWINCH) { _ in
            terminalResized = 1
            var byte: UInt8 = 0
            _ = write(consoleWakeDescriptor, &byte, 1)
        }
        let shared = ConsoleShared(wakePipe: wakePipe, errorPipe: error.read)
        self.shared = shared
        let editor = ConsoleEditor(shared: shared, answer: answer, complete: complete, top: top, onEnd: onEnd)
        DetachedThread.start(name: "graphhost-console") {
            editor.run()
            shared.stopped.signal()
        }
    }

    /// Ends the console thread, leaving the last status line on screen, and restores the terminal and standard error.
    func stop() {
        guard let shared else { return }
        self.shared = nil
        shared.requests.withLock { $0.stop = true }
        shared.wakeUp()
        // libedit may be waiting inside el_gets for the rest of a key sequence (a lone Escape, half a UTF-8
        // character); stopping does not wait for that key. The thread then only returns (see readKey).
        let abandoned = shared.stopped.wait(timeout: .now() + Self.stopTimeout) == .timedOut
        if abandoned {
            writeToStandardError("console: the line editor is waiting for the rest of a key; leaving it\n")
        }
        signal(SIGWINCH, SIG_DFL)
        tcsetattr(STDIN_FILENO, TCSANOW, &savedTerminal)
        fflush(nil)
        dup2(savedError, STDERR_FILENO)
        close(savedError)
        let rest = ConsoleEditor.readAll(shared.errorPipe)
        if !rest.isEmpty { _ = rest.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) } }
        // A thread left inside libedit still holds these descriptors: they stay open, so that a key it reads later
        // can never make it poll a number the process has since reused for something else.
        guard !abandoned else { return }
        for fd in [shared.errorPipe, shared.wakePipe.read, shared.wakePipe.write] { close(fd) }
        consoleWakeDescriptor = -1
    }

    /// Called from any thread.
    func setStatus(_ text: String) {
        guard let shared else { return }
        shared.requests.withLock { $0.status = text }
        shared.wakeUp()
    }
}

/// What other threads hand to the console thread: a new status line or the request to stop, and the pipes that
/// wake it (`wakePipe`) and carry standard error (`errorPipe`).
final class ConsoleShared: Sendable {
    struct Requests {
        var status: String?
        var stop = false
    }
    let requests = Mutex(Requests())
    let stopped = DispatchSemaphore(value: 0)
    let wakePipe: (read: Int32, write: Int32)
    let errorPipe: Int32

    init(wakePipe: (read: Int32, write: Int32), errorPipe: Int32) {
        self.wakePipe = wakePipe
        self.errorPipe = errorPipe
    }

    func wakeUp() {
        var byte: UInt8 = 0
        _ = write(wakePipe.write, &byte, 1)
    }
}

/// The console thread's side: libedit, the history, the status line and the lines waiting to be printed above it.
/// It lives on that thread alone.
final class ConsoleEditor {
    static let prompt = "> "
    static let historyLimit = 1000

    private let shared: ConsoleShared
    private let answer: @Sendable (String) -> String
    private let complete: @Sendable (String) -> [String]
    private let top: @Sendable (_ columns: Int, _ rows: Int) -> [String]
    private let onEnd: @Sendable () -> Void
    /// `top` is on screen (the terminal's alternate screen), redrawn every `topMilliseconds` until a key.
    private var showingTop = false
    static let topMilliseconds: Int32 = 250
    private var editor: OpaquePointer?
    private var history: OpaquePointer?
    private var historyPath: String?
    private var columns = 80
    private var status = ""
    private var shownStatusColumns = 0
    private var above: [String] = []
    private var errorBytes: [UInt8] = []
    private var accepted: String?
    private var endRequested = false

    init(
        shared: ConsoleShared, answer: @escaping @Sendable (String) -> String,
        complete: @escaping @Sendable (String) -> [String],
        top: @escaping @Sendable (_ columns: Int, _ rows: Int) -> [String], onEnd: @escaping @Sendable () -> Void
    ) {
        self.shared = shared
        self.answer = answer
        self.complete = complete
        self.top = top
        self.onEnd = onEnd
    }

    func run() {
        guard openEditor() else { return }
        defer { closeEditor() }
        var descriptors = [
            pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
            pollfd(fd: shared.wakePipe.read, events: Int16(POLLIN), revents: 0),
            pollfd(fd: shared.errorPipe, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            if poll(&descriptors, nfds_t(descriptors.count), showingTop ? Self.topMilliseconds : -1) < 0 {
                if errno == EINTR { continue }  // a signal; SIGWINCH's handler has also written to the wake pipe
                return
            }
            _ = Self.readAll(shared.wakePipe.read)
            let (status, stop) = shared.requests.withLock { requests in
                defer { requests.status = nil }
                return (requests.status, requests.stop)
            }
            readErrorLines(all: stop)
            if terminalResized != 0 {
                terminalResized = 0
                resize()
            }
            if stop {
                if showingTop { leaveTop() }
                return
            }
            if let status { self.status = status }
            let input = descriptors[0].revents
            if showingTop {
                if input & Int16(POLLIN) != 0 {
                    var key: UInt8 = 0
                    _ = Glibc.read(STDIN_FILENO, &key, 1)
                    leaveTop()
                } else {
                    drawTop()
                    continue
                }
            } else if input & Int16(POLLIN) != 0 {
                readKey()
            } else if input & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                descriptors[0].fd = -1  // the terminal is gone
                onEnd()
            }
            if showingTop {
                drawTop()
            } else if !above.isEmpty {
                redraw()
            } else if status != nil {
                redrawStatus()
            }
        }
    }

    private func openEditor() -> Bool {
        guard let editor = gh_edit_init("graphhost") else { return false }
        self.editor = editor
        history = history_init()
        gh_edit_history_set_size(history, Int32(Self.historyLimit))
        loadHistory()
        gh_edit_configure(editor, { _ in ConsoleEditor.promptText }, history, Unmanaged.passUnretained(self).toOpaque())
        gh_edit_setty(editor, "-isig")  // Ctrl-C is a key; Ctrl-Z does not suspend a raw terminal
        gh_edit_add_command(editor, "graphhost-accept", "Run the line", { el, _ in ConsoleEditor.of(el).acceptLine() })
        gh_edit_add_command(
            editor, "graphhost-complete", "Complete the line", { el, _ in ConsoleEditor.of(el).completeLine() })
        gh_edit_add_command(editor, "graphhost-end", "Stop playing", { el, _ in ConsoleEditor.of(el).end() })
        gh_edit_add_command(
            editor, "graphhost-end-or-delete", "Stop playing on an empty line, else delete a character",
            { el, _ in ConsoleEditor.of(el).endOrDelete() })
        for (key, command) in [
            ("^M", "graphhost-accept"), ("^J", "graphhost-accept"), ("^I", "graphhost-complete"),
            ("^C", "graphhost-end"), ("^D", "graphhost-end-or-delete"),
            ("^W", "ed-delete-prev-word"), ("^U", "vi-kill-line-prev"),
        ] {
            gh_edit_bind(editor, key, command)
        }
        columns = Self.terminalWidth()
        output("\r" + statusLine() + "\r\n")
        gh_edit_set_unbuffered(editor, 1)  // raw mode; draws the prompt
        return true
    }

    private func closeEditor() {
        readErrorLines(all: true)
        output(clearToStatusLine() + above.map(Self.terminalLines).joined() + statusLine() + "\r\n")
        gh_edit_set_unbuffered(editor, 0)
        el_end(editor)
        history_end(history)
    }

    /// Never freed or written.
    nonisolated(unsafe) private static let promptText = strdup(prompt)!

    private static func of(_ editor: OpaquePointer?) -> ConsoleEditor {
        Unmanaged<ConsoleEditor>.fromOpaque(gh_edit_client(editor)).takeUnretainedValue()
    }

    /// Feeds libedit one key (or key sequence), then acts on what the key commands noted.
    private func readKey() {
        var count: Int32 = 0
        _ = el_gets(editor, &count)
        if shared.requests.withLock({ $0.stop }) { return }
        if endRequested {
            endRequested = false
            onEnd()
        }
        guard let line = accepted else { return }
        accepted = nil
        output(clearToStatusLine() + statusLine() + "\r\n")
        gh_edit_set_unbuffered(editor, 0)  // an empty line and a new prompt; the history walk starts over
        gh_edit_set_unbuffered(editor, 1)
        let text = Format.trimmed(line)
        guard !text.isEmpty else { return }
        remember(text)
        above.append(Self.prompt + text)
        if text == "top" {
            showingTop = true
            output("\u{1B}[?1049h\u{1B}[?25l")
            drawTop()
            return
        }
        above.append(answer(text))
        if text == "quit" { onEnd() }
    }

    // MARK: top

    /// Draws `top` over the whole alternate screen.
    private func drawTop() {
        var size = winsize()
        let rows = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_row > 0 ? Int(size.ws_row) : 24
        let lines = top(Self.terminalWidth(), rows)
        output("\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n") + "\u{1B}[J")
    }

    /// Back to the prompt and the status line, as they were.
    private func leaveTop() {
        showingTop = false
        output("\u{1B}[?25h\u{1B}[?1049l")
    }

    // Key commands: they return libedit's CC_* code for what to redraw.

    private func acceptLine() -> UInt8 {
        let (before, after) = lineScalars()
        accepted = Self.string(before + after)
        return UInt8(CC_NORM)
    }

    private func end() -> UInt8 {
        endRequested = true
        return UInt8(CC_NORM)
    }

    private func endOrDelete() -> UInt8 {
        let (before, after) = lineScalars()
        if before.isEmpty && after.isEmpty { return end() }
        if !after.isEmpty {
            el_cursor(editor, 1)
            el_deletestr(editor, 1)
        }
        return UInt8(CC_REFRESH)
    }

    /// Completes the text before the cursor: the one choice, or the choices' common start; when that adds nothing,
    /// lists the choices' last words above.
    private func completeLine() -> UInt8 {
        let before = Self.string(lineScalars().before)
        let choices = complete(before)
        guard let first = choices.first else { return UInt8(CC_NORM) }
        let common = choices.dropFirst().reduce(first) { String(zip($0, $1).prefix { $0 == $1 }.map(\.0)) }
        if common.unicodeScalars.count > before.unicodeScalars.count {
            el_deletestr(editor, Int32(before.unicodeScalars.count))
            el_insertstr(editor, common)
            return UInt8(CC_REFRESH)
        }
        if choices.count > 1 {
            above.append(choices.map { $0.split(separator: " ").last.map(String.init) ?? $0 }.joined(separator: "  "))
        }
        return UInt8(CC_NORM)
    }

    // MARK: drawing

    /// Prints `above`, then the status line and the prompt with the line being edited.
    private func redraw() {
        output(clearToStatusLine() + above.map(Self.terminalLines).joined() + statusLine() + "\r\n")
        above.removeAll()
        gh_edit_redraw(editor)
    }

    private func redrawStatus() {
        output("\u{1B}7\r\u{1B}[\(cursorRow() + 1)A\u{1B}[2K" + statusLine() + "\u{1B}8")
    }

    /// Terminals that reflow (tmux, VTE, kitty) rewrap the status line and the edited line at the new width;
    /// the cursor is then `rows` below the status line's start.
    private func resize() {
        columns = Self.terminalWidth()
        el_resize(editor)
        let rows = cursorRow() + max(1, (shownStatusColumns + columns - 1) / columns)
        output("\r\u{1B}[\(rows)A\u{1B}[J" + statusLine() + "\r\n")
        gh_edit_redraw(editor)
    }

    /// Moves to the start of the status line and clears it and everything below.
    private func clearToStatusLine() -> String {
        "\r\u{1B}[\(cursorRow() + 1)A\u{1B}[J"
    }

    /// The status, cut to the terminal's width in display columns.
    private func statusLine() -> String {
        var shown = String.UnicodeScalarView()
        var used = 0
        for scalar in status.unicodeScalars {
            let width = Self.columns(scalar)
            if used + width > columns { break }
            shown.append(scalar)
            used += width
        }
        shownStatusColumns = used
        return String(shown)
    }

    /// The row, counted from the prompt's, that libedit has put the cursor on. Its layout (refresh.c) moves a
    /// character that does not fit at the end of a row to the next one.
    private func cursorRow() -> Int {
        let (before, after) = lineScalars()
        var row = 0
        var column = 0
        for scalar in Array(Self.prompt.unicodeScalars) + before {
            let width = Self.columns(scalar)
            if column + width > columns {
                row += 1
                column = 0
            }
            column += width
            if column >= columns {
                row += 1
                column = 0
            }
        }
        if let next = after.first, column + Self.columns(next) > columns { row += 1 }
        return row
    }

    private func lineScalars() -> (before: [Unicode.Scalar], after: [Unicode.Scalar]) {
        guard let line = el_wline(editor)?.pointee else { return ([], []) }
        func scalars(_ from: UnsafePointer<wchar_t>, _ to: UnsafePointer<wchar_t>) -> [Unicode.Scalar] {
            UnsafeBufferPointer(start: from, count: to - from).compactMap { Unicode.Scalar(UInt32(bitPattern: $0)) }
        }
        return (scalars(line.buffer, line.cursor), scalars(line.cursor, line.lastchar))
    }

    private func output(_ text: String) {
        print(text, terminator: "")
        fflush(nil)
    }

    /// Whole lines written to standard error, for printing above; with `all`, an unfinished last line too.
    private func readErrorLines(all: Bool) {
        errorBytes += Self.readAll(shared.errorPipe)
        while let end = errorBytes.firstIndex(of: UInt8(ascii: "\n")) {
            above.append(String(decoding: errorBytes[..<end], as: UTF8.self))
            errorBytes.removeSubrange(...end)
        }
        if all && !errorBytes.isEmpty {
            above.append(String(decoding: errorBytes, as: UTF8.self))
            errorBytes.removeAll()
        }
    }

    // MARK: history

    private func loadHistory() {
        let environment = ProcessInfo.processInfo.environment
        let state =
            environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path) + "/.local/state"
        let folder = state + "/graphhost"
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            above.append("history is not saved: cannot create \(folder): \(error)")
            return
        }
        let path = folder + "/history"
        historyPath = path
        // Each accepted line is appended to the file; when it holds more than `historyLimit` lines, loading keeps
        // the latest ones and the file is rewritten with them.
        if gh_edit_history_load(history, path) > Self.historyLimit { gh_edit_history_save(history, path) }
    }

    private func remember(_ line: String) {
        if let latest = gh_edit_history_latest(history), String(cString: latest) == line { return }
        gh_edit_history_enter(history, line)
        if let historyPath, gh_edit_history_append_line(historyPath, line) < 0 {
            above.append("history: cannot write \(historyPath): \(String(cString: strerror(errno)))")
        }
    }

    // MARK: helpers

    private static func terminalWidth() -> Int {
        var size = winsize()
        return ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
    }

    /// Display columns: 2 for wide characters (CJK, most emoji), 0 for combining ones.
    private static func columns(_ scalar: Unicode.Scalar) -> Int {
        Int(gh_edit_columns(wchar_t(bitPattern: scalar.value)))
    }

    private static func string(_ scalars: [Unicode.Scalar]) -> String {
        String(String.UnicodeScalarView(scalars))
    }

    private static func terminalLines(_ text: String) -> String {
        text.replacing("\n", with: "\r\n") + "\r\n"
    }

    /// A pipe whose ends never block.
    static func makePipe() -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        pipe(&ends)
        for fd in ends {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        return (ends[0], ends[1])
    }

    static func readAll(_ fd: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { return bytes }
            bytes += chunk[..<count]
        }
    }
}
