import XCTest

@testable import GraphHost

extension XCTestCase {
    /// Asserts that a `run --record` file holds the offline render sample for sample, from the live start on (a run
    /// plays silence until its streams have buffered) up to the stop fade; returns the frames compared.
    @discardableResult
    func assertRecordingEqualsTheOfflineRender(
        _ recording: String, graph: String, file: StaticString = #filePath, line: UInt = #line
    ) throws -> Int {
        let recorded = try SoundFile(path: recording)
        XCTAssertEqual(recorded.channels, 2, file: file, line: line)
        let liveStart = try XCTUnwrap(
            SignalMatch.firstNonZeroFrame(recorded.samples, channels: 2), "silent recording", file: file, line: line)
        let reference = try TestSupport.render(graph, durationFrames: recorded.frames).samples
        let offset = liveStart - (SignalMatch.firstNonZeroFrame(reference, channels: 2) ?? 0)
        XCTAssertGreaterThanOrEqual(offset, 0, file: file, line: line)
        // The last 100 ms hold the stop fade.
        let frames = min(reference.count / 2, recorded.frames - offset) - 4800
        XCTAssertGreaterThan(frames, 48000, file: file, line: line)
        let differing = (0..<(2 * max(0, frames))).filter { recorded.samples[2 * offset + $0] != reference[$0] }
        XCTAssertEqual(
            differing.count, 0, "first difference at frame \(differing.first.map { $0 / 2 } ?? 0) of \(frames)",
            file: file, line: line)
        return frames
    }
}
