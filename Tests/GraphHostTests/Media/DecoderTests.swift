import XCTest

@testable import GraphHost

/// The stream node's decoder gives exactly what the mpg123 command line gives.
final class DecoderTests: XCTestCase {
    /// `mpg123 -e f32` of a file, as interleaved floats.
    func reference(_ mp3: String, mono: Bool = false) throws -> [Float] {
        let data = try TestSupport.run(["mpg123", "-q", "-s", "-e", "f32"] + (mono ? ["-m"] : []) + [mp3])
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    func testRenderEqualsMpg123SampleForSample() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 3)
        let expected = try reference(mp3)
        let (samples, summary) = try TestSupport.render(TestSupport.streamGraph(mp3))
        XCTAssertGreaterThan(expected.count, 2 * 48000 * 2)
        XCTAssertEqual(samples.count, expected.count)
        XCTAssertEqual(samples, expected)
        XCTAssertEqual(summary.underruns, 0)
    }

    func testOddSizedChunksDecodeIdentically() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 2)
        let expected = try reference(mp3)
        let format = GraphFormat(sampleRate: 48000, channels: 2, maxFrames: 1024)
        let ring = PCMRing.allocate(minimumFrames: 1 << 15, channels: 2)
        let counters = StreamCounters.create()
        let wakeup = RingWakeup(room: counters.room)
        defer {
            ring.deallocate()
            counters.destroy()
        }
        let decoder = StreamDecoder(
            source: { try ChunkedByteSource(path: mp3, sizes: [1, 3, 7, 333, 1000, 4097, 2]) },
            format: format, ring: ring, counters: counters, loop: false, wakeup: wakeup, reserveFrames: 0,
            bufferFrames: 0)
        decoder.start()
        var samples: [Float] = []
        let block = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 777)
        defer { block.deallocate() }
        while true {
            let done = counters.decoderFinished.load(ordering: .acquiring)
            let n = ring.readPlanar(into: block, channelStride: 777, frames: 777)
            for f in 0..<n { samples += [block[f], block[777 + f]] }
            wakeup.signalSpace()
            if n == 0 {
                if done { break }
                wakeup.waitForData()
            }
        }
        decoder.stop()
        XCTAssertNil(decoder.failure)
        XCTAssertEqual(samples.count, expected.count)
        XCTAssertEqual(samples, expected)
    }

    func testMonoIsCopiedToBothChannels() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 1, seconds: 1)
        let expected = try reference(mp3)
        let (samples, _) = try TestSupport.render(TestSupport.streamGraph(mp3))
        XCTAssertEqual(samples.count, 2 * expected.count)
        XCTAssertEqual(stride(from: 0, to: samples.count, by: 2).map { samples[$0] }, expected)
        XCTAssertEqual(stride(from: 1, to: samples.count, by: 2).map { samples[$0] }, expected)
    }

    /// 44.1 kHz media in a 48 kHz graph is resampled: same duration, same level.
    func testResamplesToTheGraphRate() throws {
        let mp3 = try TestSupport.mp3(rate: 44100, channels: 2, seconds: 2)
        let expected = try reference(mp3)
        let (samples, _) = try TestSupport.render(TestSupport.streamGraph(mp3))
        let expectedFrames = Double(expected.count / 2) * 48000 / 44100
        XCTAssertEqual(Double(samples.count / 2), expectedFrames, accuracy: 2)
        func rms(_ x: [Float]) -> Double { (x.reduce(0.0) { $0 + Double($1 * $1) } / Double(x.count)).squareRoot() }
        XCTAssertEqual(rms(samples), rms(expected), accuracy: rms(expected) * 0.02)
    }

    func testLoopingStreamKeepsPlaying() throws {
        let mp3 = try TestSupport.mp3(rate: 48000, channels: 2, seconds: 1)
        let path = TestSupport.graph(
            """
            { "nodes": [ { "id": "s", "type": "stream", "url": "\(mp3)", "loop": true }, \
            { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "out" } ] }
            """)
        let (samples, summary) = try TestSupport.render(path, durationFrames: 48000 * 3)
        XCTAssertEqual(samples.count, 48000 * 3 * 2)
        XCTAssertEqual(summary.underruns, 0)
        // Every half second of the three contains sound.
        for half in 0..<6 {
            let part = samples[(half * 48000)..<((half + 1) * 48000)]
            XCTAssertGreaterThan(part.map(abs).max()!, 0.05, "half-second \(half) is silent")
        }
    }
}

/// Delivers a file's bytes in a fixed cycle of chunk sizes, as a network would. Only the decoder thread reads it.
final class ChunkedByteSource: ByteSource, @unchecked Sendable {
    let name: String
    let bytes: [UInt8]
    let sizes: [Int]
    var offset = 0, turn = 0

    init(path: String, sizes: [Int]) throws {
        name = path
        bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        self.sizes = sizes
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(sizes[turn % sizes.count], buffer.count, bytes.count - offset)
        turn += 1
        let start = offset
        bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[start..<(start + n)])) }
        offset += n
        return n
    }

    func rewind() throws { offset = 0 }
}
