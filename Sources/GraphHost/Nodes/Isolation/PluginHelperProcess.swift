import CIsolationGlue
import FoundationEssentials
import Glibc
import GraphHostCore

/// One running `graphhost plugin-host` process: the shared block and eventfds it inherits as descriptors 3, 4 and 5,
/// its standard input and output as a line channel (requests and their one-line answers), its pidfd for the
/// supervisor. Its standard error is the host's.
final class PluginHelperProcess {
    let pid: pid_t
    let pidfd: Int32
    private let requests: Int32
    private let answers: Int32
    private var buffered: [UInt8] = []
    private(set) var ended: String?
    private var stopped = false

    /// The executable that hosts plugins: GRAPHHOST_EXECUTABLE (tests that render in their own process), else this one.
    static var executable: String {
        ProcessInfo.processInfo.environment["GRAPHHOST_EXECUTABLE"] ?? "/proc/self/exe"
    }

    /// Starts the helper with `arguments` after `plugin-host`, sharing `shared` (3), `wake` (4) and `done` (5), and
    /// waits up to `timeout` seconds for its first line: "ready LATENCY KEEPS-STATE", or "error MESSAGE" (thrown).
    /// `savedState` (`SavedPluginState`) is restored by the helper before it serves.
    init(arguments: [String], shared: Int32, wake: Int32, done: Int32, timeout: Double, savedState: String = "") throws
    {
        var input: [Int32] = [-1, -1]
        var output: [Int32] = [-1, -1]
        guard gh_isolation_pipe(&input) == 0 else { throw PluginIsolationError.system("pipe", errno) }
        guard gh_isolation_pipe(&output) == 0 else {
            Glibc.close(input[0])
            Glibc.close(input[1])
            throw PluginIsolationError.system("pipe", errno)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Descriptors above the targets first, so no dup2 overwrites a source another one still needs.
        let sources = [input[0], output[1], shared, wake, done].map { fcntl($0, F_DUPFD_CLOEXEC, 10) }
        for (target, source) in zip([0, 1, 3, 4, 5] as [Int32], sources) {
            posix_spawn_file_actions_adddup2(&actions, source, target)
        }
        let argv = [Self.executable, "plugin-host"] + arguments
        let copies = argv.map { strdup($0) }
        // A crash ends the helper at once: Swift's backtracer would keep it (and its descriptors) alive for seconds.
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        let variables = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { (copies + variables).forEach { free($0) } }
        // A helper that ends while it is being written to must not end the host.
        Glibc.signal(SIGPIPE, SIG_IGN)
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, Self.executable, &actions, nil, copies + [nil], variables + [nil])
        // Only the helper may hold the pipes' other ends: its end closes them when it dies.
        (sources + [input[0], output[1]]).forEach { close($0) }
        guard spawned == 0 else {
            close(input[1])
            close(output[0])
            throw PluginIsolationError.system("posix_spawn \(Self.executable)", spawned)
        }
        self.pid = pid
        pidfd = gh_isolation_pidfd(pid)
        requests = input[1]
        answers = output[0]
        // The helper's URID map starts as a copy of this one, so the URIDs in shared events mean the same there.
        write(line: (["urids"] + URIDMap.shared.uris).joined(separator: " "))
        write(line: "state \(savedState)")
        let first = readLine(timeout: timeout)
        guard let first, first.hasPrefix("ready") else {
            let said = first.map { $0.hasPrefix("error ") ? String($0.dropFirst(6)) : $0 }
            stop()
            throw PluginIsolationError.helperFailed(said ?? ended ?? "no answer within \(Format.number(timeout)) s")
        }
        readyLine = first
    }

    /// The helper's first line ("ready" and what it reports).
    private(set) var readyLine = ""

    /// Writes a line to the helper; false when it could not take it all (it ended).
    @discardableResult
    private func write(line: String) -> Bool {
        let bytes = Array((String(line.map { $0 == "\n" ? " " : $0 }) + "\n").utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBufferPointer { Glibc.write(requests, $0.baseAddress! + sent, $0.count - sent) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    /// Sends a request line and returns the answer ("ok …"), throwing the helper's error or its end.
    func request(_ line: String, timeout: Double) throws -> String {
        guard write(line: line), let answer = readLine(timeout: timeout) else {
            throw PluginIsolationError.helperFailed(ended ?? "its process does not answer")
        }
        if answer.hasPrefix("error ") { throw PluginIsolationError.refused(String(answer.dropFirst(6))) }
        return answer
    }

    /// The next line the helper writes, or nil when it ends or says nothing within `timeout` seconds.
    private func readLine(timeout: Double) -> String? {
        let deadline = MonotonicClock.nanos() + Int(timeout * 1e9)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = buffered.firstIndex(of: 10) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            let left = deadline - MonotonicClock.nanos()
            guard left > 0 else { return nil }
            var ready = pollfd(fd: answers, events: Int16(POLLIN), revents: 0)
            let woke = poll(&ready, 1, Int32(min(left / 1_000_000 + 1, Int(Int32.max))))
            if woke < 0 && errno == EINTR { continue }
            guard woke > 0 else { return nil }
            let n = read(answers, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                _ = reap(wait: true)
                return nil
            }
            buffered += chunk[..<n]
        }
    }

    /// Whether the process has ended, reaping it (and noting how it ended) if so; `wait` waits for it.
    @discardableResult
    func reap(wait: Bool = false) -> Bool {
        if ended != nil { return true }
        var status: Int32 = 0
        var got: pid_t
        repeat { got = waitpid(pid, &status, wait ? 0 : WNOHANG) } while got < 0 && errno == EINTR
        guard got == pid else { return false }
        let signal = status & 0x7f
        ended =
            signal != 0
            ? "its process was killed by \(PluginProbe.signalName(signal))"
            : "its process exited with status \(status >> 8 & 0xff)"
        return true
    }

    /// Ends the helper: closes its input (it exits), then kills it if it has not within a second, and reaps it.
    func stop() {
        guard !stopped else { return }
        stopped = true
        close(requests)
        var ready = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        if pidfd < 0 || poll(&ready, 1, 1000) == 0 { Glibc.kill(pid, SIGKILL) }
        reap(wait: true)
        close(answers)
        if pidfd >= 0 { close(pidfd) }
    }

    /// Kills the helper at once (a hang) and reaps it.
    func kill() {
        Glibc.kill(pid, SIGKILL)
        reap(wait: true)
    }
}

/// Why an isolated plugin could not be started or changed.
enum PluginIsolationError: Error, CustomStringConvertible {
    case system(String, Int32)
    case helperFailed(String)
    case refused(String)
    case unsupported(String)

    var description: String {
        switch self {
        case .system(let call, let code): return "\(call) failed: \(String(cString: strerror(code)))"
        case .helperFailed(let reason): return "the plugin's helper process failed: \(reason)"
        case .refused(let message): return message
        case .unsupported(let reason): return reason
        }
    }
}
