import XCTest

@testable import GraphHost

/// The corrupt-audio guard silences each 576-frame block that holds a non-finite sample or one beyond ±2.0, and
/// leaves every other block, and full scale and the ceiling itself, untouched.
final class CorruptAudioGuardTests: XCTestCase {
    func testEachImplausibleBlockIsSilencedAndNoOther() {
        let bad: [Float] = [.nan, -.nan, .infinity, -.infinity, 2.0001, -2.0001, 1e30, .greatestFiniteMagnitude]
        for channels in [1, 2] {
            for frames in [5, 576, 577, 1152, 1729] {
                let blocks = (frames + 575) / 576
                for badBlock in 0..<blocks {
                    for (k, value) in bad.enumerated() {
                        var samples = (0..<(frames * channels)).map { Float(sin(Double($0) * 0.01)) * 2 }
                        // Somewhere in the block, the last sample of a short block included (past the vector loop).
                        let blockStart = badBlock * 576 * channels
                        let blockEnd = min(frames, (badBlock + 1) * 576) * channels
                        let at = k % 2 == 0 ? blockEnd - 1 : blockStart + (blockEnd - blockStart) / 2
                        samples[at] = value
                        let before = samples
                        let muted = samples.withUnsafeMutableBufferPointer {
                            CorruptAudioGuard.muteImplausibleBlocks($0.baseAddress!, frames: frames, channels: channels)
                        }
                        XCTAssertEqual(muted, 1, "\(value) at \(at) of \(frames)x\(channels)")
                        for i in 0..<samples.count {
                            if (blockStart..<blockEnd).contains(i) {
                                XCTAssertEqual(samples[i], 0, "\(value): sample \(i) of the bad block")
                            } else {
                                XCTAssertEqual(samples[i], before[i], "\(value): sample \(i) outside the bad block")
                            }
                        }
                    }
                }
            }
        }
    }

    func testFullScaleAndTheCeilingPass() {
        var samples: [Float] = [1, -1, 2, -2, 0, .leastNonzeroMagnitude, 1.9999, -1.9999, 0.5]
        let before = samples
        let muted = samples.withUnsafeMutableBufferPointer {
            CorruptAudioGuard.muteImplausibleBlocks($0.baseAddress!, frames: 9, channels: 1)
        }
        XCTAssertEqual(muted, 0)
        XCTAssertEqual(samples, before)
    }
}
