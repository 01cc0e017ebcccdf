import XCTest

/// The judgement of graphhost's late cycles against a peer's: chance between two clients woken late alike passes, a
/// graphhost late more often fails.
final class PeerJudgementTests: XCTestCase {
    /// Cycles where graphhost alone was late `ours` times, the peer alone `theirs` times, both on time in 7000.
    static func cycles(ours: Int, theirs: Int) -> [[(finished: Bool, micros: Double)]] {
        Array(repeating: [(false, 40), (true, 40)], count: ours)
            + Array(repeating: [(true, 40), (false, 40)], count: theirs)
            + Array(repeating: [(true, 40), (true, 40)], count: 7000)
    }

    func testChanceBetweenTwoClientsPassesAndAGraphhostLateMoreOftenFails() {
        for (ours, theirs) in [(0, 0), (8, 7), (3, 0), (12, 5), (30, 30)] {
            let judged = PeerJudgement.lateMoreOftenThanPeer(Self.cycles(ours: ours, theirs: theirs))
            XCTAssertFalse(judged.more, "\(ours) against \(theirs): \(judged)")
        }
        // A graphhost stopped 5 x 5 ms at quantum 64 (45 late cycles against pw-play's 15), and worse.
        for (ours, theirs) in [(45, 15), (20, 0), (200, 120)] {
            let judged = PeerJudgement.lateMoreOftenThanPeer(Self.cycles(ours: ours, theirs: theirs))
            XCTAssertTrue(judged.more, "\(ours) against \(theirs): \(judged)")
        }
        let even = PeerJudgement.lateMoreOftenThanPeer(Self.cycles(ours: 1, theirs: 1))
        XCTAssertEqual(even.odds, 0.75, accuracy: 1e-12)
    }
}
