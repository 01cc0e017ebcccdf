import Foundation
import XCTest

@testable import GraphHost

/// A stream's channels reach the graph by layout: 5.1 is downmixed with ITU-R BS.775 gains (the LFE left out unless
/// `lfeMix` asks), stereo feeds only the front pair of a 5.1 graph, `channelMatrix` maps channels explicitly, and
/// 6-channel files graphhost writes decode back in their order. Judged on `graphhost render`'s output.
final class ChannelMappingTests: XCTestCase {
    /// 5.1 channel order (FL FR FC LFE BL BR) and the tone each channel of the test source carries.
    static let tones: [Double] = [300, 500, 700, 60, 1100, 1300]
    static let level = 0.25
    static let names = ["FL", "FR", "FC", "LFE", "BL", "BR"]
    static let minus3dB = 0.5.squareRoot()

    /// 3 s of 5.1 made by ffmpeg (a WAV with a WAVEFORMATEXTENSIBLE channel mask, or `ext`'s own layout): each channel
    /// a tone of its own, at `level`.
    static func surround(_ ext: String = "wav") throws -> String {
        let path = TestSupport.directory.appendingPathComponent("surround-tones.\(ext)").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let expressions = tones.map { "\(level)*sin(2*PI*\(Int($0))*t)" }.joined(separator: "|")
        try TestSupport.run([
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "aevalsrc=\(expressions):c=5.1:s=48000:d=3", path,
        ])
        return path
    }

    /// Renders one stream of `media` (with `settings` added to the stream node) into a graph of `channels` channels.
    static func render(_ media: String, channels: Int, settings: String = "", ext: String = "wav") throws -> String {
        let graph = TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": \(channels) },
              "nodes": [ { "id": "s", "type": "stream", "url": "\(media)"\(settings) }, \
            { "id": "out", "type": "output" } ],
              "links": [ { "from": "s", "to": "out" } ] }
            """)
        let out = TestSupport.directory.appendingPathComponent("channels-\(UUID().uuidString).\(ext)").path
        let r = try TestSupport.graphhost(["render", graph, "-o", out, "--duration", "3"])
        XCTAssertEqual(r.status, 0, r.err)
        return out
    }

    /// The amplitude of `frequency` in `channel` of interleaved audio, over 1 s from 1 s in.
    static func amplitude(_ samples: [Float], channels: Int, _ channel: Int, _ frequency: Double) -> Double {
        var re = 0.0
        var im = 0.0
        let rate = 48000.0
        let from = 48000
        let count = 48000
        for n in 0..<count {
            let phase = 2 * Double.pi * frequency * Double(n) / rate
            re += Double(samples[channels * (from + n) + channel]) * cos(phase)
            im += Double(samples[channels * (from + n) + channel]) * sin(phase)
        }
        return 2 * (re * re + im * im).squareRoot() / Double(count)
    }

    /// Checks that output `channel` holds each source channel's tone at `gains[source]` (0: absent, below −60 dB).
    func assertGains(
        _ samples: [Float], channels: Int, _ channel: Int, _ gains: [Double], _ label: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        for (source, gain) in gains.enumerated() {
            let found = Self.amplitude(samples, channels: channels, channel, Self.tones[source]) / Self.level
            let what = "\(label): \(Self.names[source]) in output channel \(channel)"
            if gain == 0 {
                XCTAssertLessThan(found, 0.001, what, file: file, line: line)
            } else {
                XCTAssertEqual(
                    ToneMeasure.dB(found / gain), 0, accuracy: 0.1, "\(what): \(found), expected \(gain)", file: file,
                    line: line)
            }
        }
    }

    /// 5.1 into stereo: each side takes its front channel, the centre and its surround at −3 dB, scaled together so
    /// they cannot clip (1 + 2 × 0.707); the LFE is left out. Into mono: fronts and centre, surrounds at −6 dB, no LFE.
    /// With `"lfeMix": 0` the LFE joins both sides at −3 dB.
    func testSurroundIsDownmixedByLayout() throws {
        let media = try Self.surround()
        let r = Self.minus3dB
        let stereo = try SoundFile(path: try Self.render(media, channels: 2)).samples
        let side = 1 / (1 + 2 * r)
        assertGains(stereo, channels: 2, 0, [side, 0, r * side, 0, r * side, 0], "stereo")
        assertGains(stereo, channels: 2, 1, [0, side, r * side, 0, 0, r * side], "stereo")

        let mono = try SoundFile(path: try Self.render(media, channels: 1)).samples
        let m = 1 / (2 * r + 1 + 2 * r * r)
        assertGains(mono, channels: 1, 0, [r * m, r * m, m, 0, r * r * m, r * r * m], "mono")

        let withLFE = try SoundFile(path: try Self.render(media, channels: 2, settings: #", "lfeMix": 0"#)).samples
        let lfeSide = 1 / (1 + 3 * r)
        assertGains(
            withLFE, channels: 2, 0, [lfeSide, 0, r * lfeSide, r * lfeSide, r * lfeSide, 0], "stereo with lfeMix 0 dB")
        assertGains(
            withLFE, channels: 2, 1, [0, lfeSide, r * lfeSide, r * lfeSide, 0, r * lfeSide], "stereo with lfeMix 0 dB")
    }

    /// 5.1 from a WAV's channel mask and from FLAC's own order reaches a 5.1 graph channel for channel.
    func testSurroundReachesASurroundGraphChannelForChannel() throws {
        for ext in ["wav", "flac"] {
            let out = try SoundFile(path: try Self.render(try Self.surround(ext), channels: 6)).samples
            for c in 0..<6 {
                assertGains(out, channels: 6, c, (0..<6).map { $0 == c ? 1 : 0 }, ext)
            }
        }
    }

    /// Stereo into a 5.1 graph feeds the front pair only (nothing in the centre, the LFE or the surrounds); mono into
    /// stereo plays on both sides at its own level, and into 5.1 from the centre.
    func testStereoAndMonoAreUpmixedToTheFront() throws {
        let stereo = TestSupport.directory.appendingPathComponent("front-pair.wav").path
        try TestSupport.run([
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
            "aevalsrc=\(Self.level)*sin(2*PI*300*t)|\(Self.level)*sin(2*PI*500*t):c=stereo:s=48000:d=3", stereo,
        ])
        let surround = try SoundFile(path: try Self.render(stereo, channels: 6)).samples
        for c in 0..<6 {
            assertGains(surround, channels: 6, c, [c == 0 ? 1 : 0, c == 1 ? 1 : 0], "stereo into 5.1")
        }
        let mono = TestSupport.directory.appendingPathComponent("centre.wav").path
        try TestSupport.run([
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
            "aevalsrc=\(Self.level)*sin(2*PI*300*t):c=mono:s=48000:d=3", mono,
        ])
        let both = try SoundFile(path: try Self.render(mono, channels: 2)).samples
        for c in 0..<2 { assertGains(both, channels: 2, c, [1], "mono into stereo") }
        let centre = try SoundFile(path: try Self.render(mono, channels: 6)).samples
        for c in 0..<6 { assertGains(centre, channels: 6, c, [c == 2 ? 1 : 0], "mono into 5.1") }
    }

    /// A 5.1 graph written as Ogg Vorbis, Ogg Opus and WAV decodes back with ffmpeg as 5.1, each tone in its channel.
    func testSurroundFilesKeepTheirChannelOrder() throws {
        let media = try Self.surround()
        for ext in ["ogg", "opus", "wav"] {
            let file = try Self.render(media, channels: 6, ext: ext)
            let layout = String(
                decoding: try TestSupport.run([
                    "ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
                    "stream=channel_layout", "-of", "default=nw=1:nk=1", file,
                ]), as: UTF8.self)
            XCTAssertEqual(layout.trimmingCharacters(in: .whitespacesAndNewlines), "5.1", ext)
            let decoded = TestSupport.directory.appendingPathComponent("decoded-\(UUID().uuidString).wav").path
            try TestSupport.run(["ffmpeg", "-v", "error", "-y", "-i", file, "-c:a", "pcm_f32le", decoded])
            let samples = try SoundFile(path: decoded).samples
            for c in 0..<6 {
                for (source, frequency) in Self.tones.enumerated() {
                    let found = Self.amplitude(samples, channels: 6, c, frequency) / Self.level
                    if source == c {
                        XCTAssertGreaterThan(found, 0.7, "\(ext): \(Self.names[c]) lost its tone")
                    } else {
                        XCTAssertLessThan(found, 0.05, "\(ext): \(Self.names[source])'s tone in \(Self.names[c])")
                    }
                }
            }
        }
    }

    /// `channelMatrix` (rows: graph channels, columns: media channels) puts the centre on the left at half level and
    /// the LFE with the right surround on the right, as given.
    func testExplicitChannelMatrix() throws {
        let out = try SoundFile(
            path: try Self.render(
                try Self.surround(), channels: 2,
                settings: #", "channelMatrix": [[0, 0, 0.5, 0, 0, 0], [0, 0, 0, 1, 0, 0.25]]"#)
        ).samples
        assertGains(out, channels: 2, 0, [0, 0, 0.5, 0, 0, 0], "matrix")
        assertGains(out, channels: 2, 1, [0, 0, 0, 1, 0, 0.25], "matrix")
    }

    /// A matrix of the wrong shape, or with a gain out of range, is refused by `validate` naming its JSON path.
    func testChannelMatrixShapeIsValidated() throws {
        let media = try Self.surround()
        func validate(_ matrix: String, channels: Int = 2) throws -> (status: Int32, err: String) {
            let graph = TestSupport.graph(
                """
                { "format": { "channels": \(channels) },
                  "nodes": [ { "id": "s", "type": "stream", "url": "\(media)", "channelMatrix": \(matrix) }, \
                { "id": "out", "type": "output" } ],
                  "links": [ { "from": "s", "to": "out" } ] }
                """)
            let r = try TestSupport.graphhost(["validate", graph])
            return (r.status, r.err)
        }
        let rows = try validate("[[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0]]")
        XCTAssertEqual(rows.status, 2)
        XCTAssertTrue(rows.err.contains("nodes[0].channelMatrix: has 3 rows; the graph has 2 channels"), rows.err)
        let columns = try validate("[[1, 0, 0, 0, 0, 0], [0, 1]]")
        XCTAssertEqual(columns.status, 2)
        XCTAssertTrue(
            columns.err.contains("nodes[0].channelMatrix[1]: has 2 gains, but '\(media)' has 6 channels"), columns.err)
        let gain = try validate("[[1, 0, 9, 0, 0, 0], [0, 1, 0, 0, 0, 0]]")
        XCTAssertEqual(gain.status, 2)
        XCTAssertTrue(gain.err.contains("nodes[0].channelMatrix[0][2]: expected a gain within -4…4, found 9"), gain.err)
        let shape = try validate(#""left""#, channels: 1)
        XCTAssertEqual(shape.status, 2)
        XCTAssertTrue(shape.err.contains("nodes[0].channelMatrix: expected an array of 1 row"), shape.err)
        XCTAssertEqual(try validate("[[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0]]").status, 0)
    }
}
