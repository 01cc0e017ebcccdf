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

extension ProcessThreads {
    /// A thread's name, scheduling policy (0 SCHED_OTHER, 1 SCHED_FIFO, 2 SCHED_RR) and real-time priority.
    struct Scheduling {
        var id: Int32
        var name: String
        var policy: Int
        var priority: Int
    }

    /// The threads of `pid` with their scheduling (/proc/PID/task/TID/stat, fields 41 and 40).
    static func scheduling(_ pid: Int32) -> [Scheduling] {
        let tasks = "/proc/\(pid)/task"
        return ((try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []).compactMap { task in
            guard let comm = try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8),
                let stat = try? String(contentsOfFile: "\(tasks)/\(task)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")"), let id = Int32(task)
            else { return nil }
            // After the name: field 3 (state) is the first; fields 40 and 41 are the 38th and 39th.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 38, let priority = Int(fields[37]), let policy = Int(fields[38]) else { return nil }
            return Scheduling(
                id: id, name: comm.trimmingCharacters(in: .whitespacesAndNewlines), policy: policy, priority: priority)
        }
    }
}
