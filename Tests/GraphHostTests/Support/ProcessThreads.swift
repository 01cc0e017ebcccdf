import Foundation

/// What /proc tells about the threads of a running process.
enum ProcessThreads {
    /// The voluntary context switches (sleeps) of the thread of `pid` whose name starts with `name`, nil if none.
    static func wakeups(_ pid: Int32, named name: String) -> Int? {
        let tasks = "/proc/\(pid)/task"
        for task in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
            guard let comm = try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8),
                comm.hasPrefix(name),
                let status = try? String(contentsOfFile: "\(tasks)/\(task)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") })
            else { continue }
            return Int(line.split(separator: ":").last!.trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
