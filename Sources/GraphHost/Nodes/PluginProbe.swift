import CPluginProbeGlue
import FoundationEssentials
import Glibc
import GraphHostCore

/// Loads plugin code that runs while plugins are merely listed (an LV2 dynamic manifest's library, a LADSPA library,
/// with their static constructors) in a child process first, so that one that crashes, aborts, exits or hangs there
/// is named and left out instead of ending graphhost. Control world.
enum PluginProbe {
    enum Kind {
        /// LV2 bundle folders, ending in "/".
        case lv2Bundles
        /// LADSPA library paths.
        case ladspaLibraries
    }

    /// Seconds a bundle may take before it counts as hung.
    static var timeoutSeconds: Double {
        ProcessInfo.processInfo.environment["GRAPHHOST_LV2_PROBE_SECONDS"].flatMap(Double.init) ?? 10
    }

    /// Why each of `items` that failed could not be loaded; those not named loaded.
    static func failures(_ items: [String], kind: Kind) -> [String: String] {
        var failures: [String: String] = [:]
        var rest = items[...]
        while !rest.isEmpty {
            guard let (index, reason) = probe(Array(rest), kind: kind) else { break }
            failures[rest[rest.startIndex + index]] = reason
            rest = rest[(rest.startIndex + index + 1)...]
        }
        return failures
    }

    /// Probes `items` in order in one child: nil when all loaded, else the first that failed and why (the ones after
    /// it are not probed).
    static func probe(_ items: [String], kind: Kind) -> (index: Int, reason: String)? {
        let names =
            kind == .lv2Bundles ? items.map { URL(fileURLWithPath: $0, isDirectory: true).absoluteString } : items
        var fd: Int32 = -1
        let pid = withCStrings(names) {
            gh_probe_start(
                kind == .lv2Bundles ? GH_PROBE_LV2_BUNDLES : GH_PROBE_LADSPA_LIBRARIES, $0, Int32(names.count), &fd)
        }
        guard pid > 0 else {
            return (0, "cannot start a process to load it in: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var current: Int?
        var said: [String] = []
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var hung = false
        // Each item has `timeoutSeconds` from its start, however much it writes meanwhile.
        let limit = Int(timeoutSeconds * 1e9)
        var deadline = MonotonicClock.nanos() + limit
        while true {
            let left = deadline - MonotonicClock.nanos()
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = left <= 0 ? 0 : poll(&entry, 1, Int32(min(left / 1_000_000 + 1, Int(Int32.max))))
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 {
                hung = true
                kill(pid, SIGKILL)
                break
            }
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            pending += buffer[..<n]
            while let newline = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                if line.hasPrefix("\u{1}start "), let i = Int(line.dropFirst(7)) {
                    current = i
                    said = []
                    deadline = MonotonicClock.nanos() + limit
                } else if line.hasPrefix("\u{1}done ") {
                    current = nil
                } else if !line.isEmpty {
                    said = Array((said + [line]).suffix(3))
                }
            }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // Only an item that started and did not finish is to blame (the child's own end cannot fail otherwise).
        guard let current else { return nil }
        let signal = status & 0x7f
        let reason: String
        if hung {
            reason = "no answer within \(Format.number(timeoutSeconds)) s"
        } else if signal != 0 {
            reason = "killed by \(signalName(signal))"
        } else if status >> 8 & 0xff != 0 {
            reason = "exited with status \(status >> 8 & 0xff)"
        } else {
            reason = "the process loading it ended early"
        }
        return (current, said.isEmpty ? reason : reason + " (it said: " + said.joined(separator: " / ") + ")")
    }

    /// The folders of a search path (`A:B:C`), a leading "~" read as the home folder, as lilv and LADSPA hosts read it.
    static func folders(_ searchPath: String, home: String? = ProcessInfo.processInfo.environment["HOME"]) -> [String] {
        searchPath.split(separator: ":").map { folder in
            folder == "~" || folder.hasPrefix("~/") ? (home ?? "") + folder.dropFirst() : String(folder)
        }
    }

    /// "SIGABRT (Aborted)" and the like.
    static func signalName(_ signal: Int32) -> String {
        let names: [Int32: String] = [
            SIGABRT: "SIGABRT", SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS", SIGILL: "SIGILL", SIGFPE: "SIGFPE",
            SIGKILL: "SIGKILL", SIGTERM: "SIGTERM", SIGTRAP: "SIGTRAP", SIGSYS: "SIGSYS",
        ]
        let text = strsignal(signal).map { String(cString: $0) } ?? "signal \(signal)"
        return "\(names[signal] ?? "signal \(signal)") (\(text))"
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        return copies.map { UnsafePointer($0) }.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
