import XCTest

@testable import GraphHost

/// The feeds' timetable, on a simulated clock: each feed keeps its rate, and slower feeds ride on the fastest one's
/// turns instead of waking the client on their own.
final class FeedScheduleTests: XCTestCase {
    /// Ten simulated seconds of turns, each at the time `timeout` asked for: meters at 30 a second, the transport at
    /// 4 and the load at 1 arrive at their rates, in no more turns than the meters alone need.
    func testSlowerFeedsKeepTheirRatesOnTheFastestFeedsTurns() {
        var schedule = FeedSchedule<String>()
        schedule.add("meters", rate: 30, now: 0)
        schedule.add("transport", rate: 4, now: 0)
        schedule.add("load", rate: 1, now: 0)
        var counts: [String: Int] = [:]
        var turns = 0
        var now = 0
        let end = 10_000_000_000
        while now < end {
            let due = schedule.takeDue(now: now)
            if !due.isEmpty { turns += 1 }
            for feed in due { counts[feed, default: 0] += 1 }
            // A turn comes up to 2 ms late, as a busy machine wakes it.
            now += max(1, Int(schedule.timeout(cap: 1000, now: now))) * 1_000_000 + (turns % 3) * 700_000
        }
        XCTAssertEqual(Double(counts["meters"] ?? 0), 300, accuracy: 2, "\(counts)")
        XCTAssertEqual(Double(counts["transport"] ?? 0), 40, accuracy: 1, "\(counts)")
        XCTAssertEqual(Double(counts["load"] ?? 0), 10, accuracy: 1, "\(counts)")
        XCTAssertLessThanOrEqual(turns, (counts["meters"] ?? 0) + 1, "slower feeds woke the client on their own")
    }

    /// A feed alone keeps its grid: updates due on 1/rate steps however late a turn comes.
    func testAFeedAloneKeepsItsGrid() {
        var schedule = FeedSchedule<String>()
        schedule.add("load", rate: 4, now: 0)
        XCTAssertEqual(schedule.takeDue(now: 0), ["load"])
        XCTAssertEqual(schedule.takeDue(now: 249_000_000), [])
        XCTAssertEqual(schedule.timeout(cap: 1000, now: 249_000_000), 1)
        XCTAssertEqual(schedule.takeDue(now: 260_000_000), ["load"])
        XCTAssertEqual(schedule.timeout(cap: 1000, now: 260_000_000), 240)
    }
}
