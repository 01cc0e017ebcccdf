import Foundation

/// A process's resident memory (KiB), open file descriptors and threads, read from /proc (this process by default).
struct ProcessUsage {
    var residentKiB: Int
    var descriptors: Int
    var threads: Int

    init(_ pid: Int32? = nil) {
        let folder = "/proc/" + (pid.map(String.init) ?? "self")
        let status = (try? String(contentsOfFile: folder + "/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }.flatMap {
                Int($0.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "")
            } ?? -1
        }
        residentKiB = field("VmRSS")
        threads = field("Threads")
        descriptors = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/fd").count) ?? -1
    }

    /// The names of the process's threads (their `comm`), sorted.
    static func threadNames(_ pid: Int32) -> [String] {
        let folder = "/proc/\(pid)/task"
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return tasks.compactMap {
            (try? String(contentsOfFile: "\(folder)/\($0)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
        }.sorted()
    }
}
