import Foundation
import Glibc

/// Two network namespaces of the test's own, joined by a veth pair: `first` at 10.77.N.1, `second` at 10.77.N.2
/// (N from the process id, so runs side by side do not meet). Needs root and iproute2; `remove` deletes both, and the
/// pair with them, and the mount `ip netns add` makes of /run/netns when it made it (a run leaves no mount behind:
/// one kept the fresh-machine check's root from being removed). Programs enter a namespace through nsenter, which
/// only joins it: `ip netns exec` and `ip -n` also remount, which a chroot (the fresh-machine check) refuses.
final class NetworkNamespacePair {
    let first: String
    let second: String
    let firstAddress: String
    let secondAddress: String

    /// Whether /run/netns was a mount point before this process made a namespace.
    private static let mountedBefore = isMountPoint("/run/netns")

    static func isMountPoint(_ path: String) -> Bool {
        let table = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        return table.split(separator: "\n").contains { $0.split(separator: " ").dropFirst(4).first == Substring(path) }
    }

    init() throws {
        _ = Self.mountedBefore
        let id = getpid()
        first = "gh\(id)a"
        second = "gh\(id)b"
        let subnet = "10.77.\(id % 250)"
        firstAddress = "\(subnet).1"
        secondAddress = "\(subnet).2"
        let (a, b) = ("ghv\(id % 100_000)a", "ghv\(id % 100_000)b")
        let steps: [[String]] = [
            ["netns", "add", first], ["netns", "add", second],
            ["link", "add", a, "type", "veth", "peer", "name", b],
            ["link", "set", a, "netns", first], ["link", "set", b, "netns", second],
        ]
        let inside: [(String, [String])] = [
            (first, ["addr", "add", "\(firstAddress)/24", "dev", a]),
            (second, ["addr", "add", "\(secondAddress)/24", "dev", b]),
            (first, ["link", "set", a, "up"]), (second, ["link", "set", b, "up"]),
            (first, ["link", "set", "lo", "up"]), (second, ["link", "set", "lo", "up"]),
        ]
        do {
            for step in steps { _ = try TestSupport.run(["/usr/sbin/ip"] + step) }
            for (namespace, step) in inside {
                _ = try TestSupport.run(["/usr/bin/nsenter", "--net=/run/netns/\(namespace)", "/usr/sbin/ip"] + step)
            }
        } catch {
            remove()
            throw error
        }
    }

    /// The command prefix that runs a program in `namespace`.
    func launcher(_ namespace: String) -> [String] { ["/usr/bin/nsenter", "--net=/run/netns/\(namespace)"] }

    /// Runs `body` on this thread inside `namespace` (sockets it makes stay there), then comes back.
    func inside<T>(_ namespace: String, _ body: () throws -> T) throws -> T {
        let newNet: Int32 = 0x4000_0000  // CLONE_NEWNET
        // glibc's setns, which the Glibc module does not import.
        typealias SetNS = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "setns") else { throw TestSupport.ToolFailure(description: "no setns") }
        let setns = unsafeBitCast(symbol, to: SetNS.self)
        let home = open("/proc/thread-self/ns/net", O_RDONLY)
        let there = open("/run/netns/\(namespace)", O_RDONLY)
        defer {
            close(home)
            close(there)
        }
        guard home >= 0, there >= 0, setns(there, newNet) == 0 else {
            throw TestSupport.ToolFailure(
                description: "cannot enter \(namespace): \(String(cString: strerror(errno)))")
        }
        defer { _ = setns(home, newNet) }
        return try body()
    }

    func remove() {
        for namespace in [first, second] { _ = try? TestSupport.run(["/usr/sbin/ip", "netns", "del", namespace]) }
        let left = (try? FileManager.default.contentsOfDirectory(atPath: "/run/netns")) ?? []
        guard !Self.mountedBefore, left.isEmpty else { return }
        // `ip netns add` may have mounted it more than once (once per process that found it unshared).
        for _ in 0..<8 where Self.isMountPoint("/run/netns") {
            _ = try? TestSupport.run(["/usr/bin/umount", "/run/netns"])
        }
    }
}
