import Foundation
import XCTest

/// A follower node's cycles in a pw-profiler profile (`scripts/pipewire-headless xrun-start`, then `xrun-count`):
/// how many it ran and in how many it did not finish (its status not FINISHED: woken late, or still running when the
/// driver's cycle ended).
struct ProfiledCycles: CustomStringConvertible {
    let node: String
    let cycles: Int
    let late: Int

    var description: String { "\(node): \(late) of \(cycles) cycles late" }
}

/// What a peer lost in one measurement: cycles it finished late, 100 ms windows of its recording that broke, clicks
/// it did not pass.
struct PeerLoss: CustomStringConvertible {
    let peer: String
    let lost: Int
    let of: Int
    /// What was lost, after the count: "cycles late".
    let what: String

    var share: Double { of == 0 ? 1 : Double(lost) / Double(of) }
    var description: String { "\(peer): \(lost) of \(of) \(what)" }
}

extension ProfiledCycles {
    var loss: PeerLoss { PeerLoss(peer: node, lost: late, of: cycles, what: "cycles late") }
}

/// Judging graphhost against a peer (pw-play, filter-chain) in the same daemon and the same seconds: only the peer's
/// own lateness excuses graphhost. A measurement whose peer itself lost more than `peerLossAllowed` (of its cycles,
/// its recording's windows, its clicks) is not valid: it is made again, at most `measurements` times in all, and then
/// the test fails, saying the machine was too busy to judge.
enum PeerJudgement {
    static let peerLossAllowed = 0.05
    static let measurements = 3

    /// The first measurement whose peers lost no more than allowed, or nil after a failure saying the machine was
    /// too busy.
    static func measureByLosses<Measured>(
        _ what: String, file: StaticString = #filePath, line: UInt = #line,
        _ measurement: () throws -> (Measured, peers: [PeerLoss])
    ) throws -> Measured? {
        var rejected: [String] = []
        while rejected.count < measurements {
            let (measured, peers) = try measurement()
            let lost = peers.filter { $0.share > peerLossAllowed }
            print("\(what): peers \(peers)")
            if lost.isEmpty { return measured }
            rejected.append(lost.map(\.description).joined(separator: ", "))
        }
        XCTFail(
            "\(what): the machine was too busy to judge: in each of \(measurements) measurements a peer lost more than "
                + "\(Int(peerLossAllowed * 100)) % (\(rejected.joined(separator: "; ")))",
            file: file, line: line)
        return nil
    }

    /// Whether graphhost (index 0 of each shared cycle) finished late more often than the peer (index 1) in the
    /// cycles both ran, beyond what chance gives two clients the machine wakes late alike. A cycle where only one of
    /// them was late tells them apart; if neither is more prone, graphhost is the late one in each such cycle with
    /// even odds, so `graphhostOnly` of them is judged by the binomial tail P(X >= graphhostOnly): below
    /// `lateOddsAllowed` graphhost is the more often late. (Comparing the two counts directly fails about every
    /// other run wherever the machine wakes anyone late at all; a graphhost made late more often fails this.)
    static let lateOddsAllowed = 0.001

    static func lateMoreOftenThanPeer(_ shared: [[(finished: Bool, micros: Double)]]) -> (
        graphhostOnly: Int, peerOnly: Int, odds: Double, more: Bool
    ) {
        let ours = shared.filter { !$0[0].finished && $0[1].finished }.count
        let theirs = shared.filter { $0[0].finished && !$0[1].finished }.count
        let n = ours + theirs
        // P(X >= ours) for X ~ Binomial(n, 1/2), through log-gamma (n may be in the thousands).
        func logChoose(_ k: Int) -> Double {
            let (all, chosen, rest): (Double, Double, Double) = (Double(n + 1), Double(k + 1), Double(n - k + 1))
            return lgamma(all) - lgamma(chosen) - lgamma(rest)
        }
        var odds = 0.0
        for k in ours...max(ours, n) { odds += exp(logChoose(k) - Double(n) * log(2.0)) }
        return (ours, theirs, n == 0 ? 1 : odds, n > 0 && odds < lateOddsAllowed)
    }

    /// `measure` for peers judged by their profiled cycles.
    static func measure<Measured>(
        _ what: String, file: StaticString = #filePath, line: UInt = #line,
        _ measurement: () throws -> (Measured, peers: [ProfiledCycles])
    ) throws -> Measured? {
        try measureByLosses(what, file: file, line: line) {
            let (measured, peers) = try measurement()
            return (measured, peers.map(\.loss))
        }
    }
}

extension HeadlessPipeWire {
    /// Stops the profiler started with `xrun-start` and returns each node's cycles in its profile.
    func profiledCycles(_ nodes: [String]) throws -> [ProfiledCycles] {
        let lines = try script(["xrun-count", directory] + nodes).split(separator: "\n")
        guard lines.count == nodes.count else {
            throw TestSupport.ToolFailure(description: "xrun-count \(nodes): \(lines)")
        }
        return try zip(nodes, lines).map { node, line in
            let numbers = line.split(separator: " ").compactMap { Int($0) }
            guard numbers.count == 2 else { throw TestSupport.ToolFailure(description: "xrun-count \(node): \(line)") }
            return ProfiledCycles(node: node, cycles: numbers[0], late: numbers[1])
        }
    }

    /// After `profiledCycles`: how long `node` ran (awake to finished, µs) in each cycle it ran.
    func cycleDurations(_ node: String) throws -> [Double] {
        try script(["durations", directory, node]).split(separator: "\n").compactMap { Double($0) }
    }

    /// After `profiledCycles`: the driver's cycles in which every one of `nodes` ran, each node's in the order given
    /// (whether it finished, and its time from awake to finished in µs). prof.out has a 'logging follower ID ("name")'
    /// line per new follower; the k-th owns fields 4+8k+1 ... 4+8k+8 of a prof.log line (tab-separated, one line a
    /// cycle): 4+8k+6 its time from awake to finished, 4+8k+7 its status (3: FINISHED), as `scripts/pipewire-headless`
    /// reads them.
    func sharedCycles(_ nodes: [String]) throws -> [[(finished: Bool, micros: Double)]] {
        let profiler = URL(fileURLWithPath: directory).appendingPathComponent("profiler")
        let followers = try String(contentsOf: profiler.appendingPathComponent("prof.out"), encoding: .utf8)
            .split(whereSeparator: { $0 == "\r" || $0 == "\n" }).filter { $0.hasPrefix("logging follower") }
        let columns = nodes.map { node in followers.indices.filter { followers[$0].contains("(\"\(node)\")") } }
        let log = try String(contentsOf: profiler.appendingPathComponent("prof.log"), encoding: .utf8)
        return log.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            func field(_ n: Int) -> String? {
                n <= fields.count ? fields[n - 1].trimmingCharacters(in: .whitespaces) : nil
            }
            let cycle = columns.map { owned in
                owned.lazy.compactMap { k -> (finished: Bool, micros: Double)? in
                    guard let status = field(4 + 8 * k + 7).flatMap({ Int($0) }) else { return nil }
                    return (status == 3, field(4 + 8 * k + 6).flatMap { Double($0) } ?? 0)
                }.first
            }
            return cycle.contains { $0 == nil } ? nil : cycle.map { $0! }
        }
    }
}
