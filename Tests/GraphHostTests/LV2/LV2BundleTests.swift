import Foundation
import XCTest

@testable import GraphHost

/// Plugins/graphhost-ipod-eq.lv2 through lilv's tools: metadata, presets, and output equal to `IPodEQKernel`.
/// Needs lv2info, lv2apply and sox; a missing tool fails the test.
final class LV2BundleTests: XCTestCase {
    static let bundle = TestSupport.root.appendingPathComponent("Plugins/graphhost-ipod-eq.lv2")
    static let uri = "urn:graphhost:ipod-eq"
    static let bandSymbols = [
        "band_32", "band_64", "band_125", "band_250", "band_500", "band_1k", "band_2k", "band_4k", "band_8k",
        "band_16k",
    ]

    /// Builds the shared library with scripts/build-plugins when it is missing (tests do not rebuild a stale one).
    override func setUpWithError() throws {
        let library = Self.bundle.appendingPathComponent("libGraphHostIPodEQLV2.so").path
        if !FileManager.default.fileExists(atPath: library) {
            // `swift test` holds .build's lock while tests run, so the nested build must not wait for it.
            try TestSupport.run([
                TestSupport.root.appendingPathComponent("scripts/build-plugins").path, "--ignore-lock",
            ])
        }
        XCTAssertTrue(
            FileManager.default.fileExists(atPath: library), "scripts/build-plugins did not produce \(library)")
    }

    /// Runs an lilv tool with LV2_PATH set to Plugins/.
    func lilvTool(_ arguments: [String]) throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment["LV2_PATH"] = TestSupport.root.appendingPathComponent("Plugins").path
        let result = try TestSupport.execute(URL(fileURLWithPath: "/usr/bin/env"), arguments, environment: environment)
        let err = String(decoding: result.err, as: UTF8.self)
        XCTAssertEqual(result.status, 0, "\(arguments.joined(separator: " ")) failed: \(err)")
        if result.status != 0 { throw TestSupport.ToolFailure(description: err) }
        return String(decoding: result.out, as: UTF8.self)
    }

    /// A host that loads the EQ loads the render core and the EQ math, not the rest of graphhost, and needs no Swift
    /// toolchain: the release build links the runtime in, as the package ships it.
    func testTheLibraryLinksOnlyTheRenderCore() throws {
        let library = Self.bundle.appendingPathComponent("libGraphHostIPodEQLV2.so").path
        let needed = String(decoding: try TestSupport.run(["ldd", library]), as: UTF8.self)
        XCTAssertTrue(needed.contains("libc.so"), "ldd printed nothing of use:\n\(needed)")
        for name in ["swift", "lilv", "pipewire", "curl", "mpg123", "soxr", "sndfile", "Foundation", "icu"] {
            XCTAssertFalse(needed.lowercased().contains(name.lowercased()), "the plugin links \(name):\n\(needed)")
        }
    }

    func testInfoListsPortsAndPresets() throws {
        let info = try lilvTool(["lv2info", Self.uri])
        XCTAssertTrue(info.contains("Name:              graphhost iPod EQ"), info)
        XCTAssertTrue(info.contains("Optional Features: http://lv2plug.in/ns/lv2core#hardRTCapable"), info)
        XCTAssertFalse(info.contains("Required Features"), info)
        let symbols = info.split(separator: "\n").compactMap { line -> String? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == "Symbol" else { return nil }
            return parts[1].trimmingCharacters(in: .whitespaces)
        }
        XCTAssertEqual(symbols, ["in_l", "in_r", "out_l", "out_r"] + Self.bandSymbols + ["preamp", "preset"])
        guard let presets = info.range(of: "Presets:"), let ports = info.range(of: "Port 0:") else {
            return XCTFail(info)
        }
        let names = info[presets.upperBound..<ports.lowerBound].split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        XCTAssertEqual(names.count, 22)
        XCTAssertEqual(Set(names), Set(IPodEQPreset.all.map(\.name)))
    }

    /// presets.ttl holds exactly the factory table: band gains and preset index of every preset.
    func testPresetFileMatchesTheFactoryTable() throws {
        let text = try String(contentsOf: Self.bundle.appendingPathComponent("presets.ttl"), encoding: .utf8)
        let blocks = text.components(separatedBy: "\n<urn:graphhost:ipod-eq:preset:").dropFirst()
        XCTAssertEqual(blocks.count, IPodEQPreset.all.count)
        let label = try NSRegularExpression(pattern: #"rdfs:label "([^"]+)""#)
        let value = try NSRegularExpression(pattern: #"lv2:symbol "(\w+)" ; pset:value (-?[0-9.]+)"#)
        for block in blocks {
            let range = NSRange(block.startIndex..., in: block)
            guard let l = label.firstMatch(in: block, range: range),
                let name = Range(l.range(at: 1), in: block).map({ String(block[$0]) }),
                let preset = IPodEQPreset.all.first(where: { $0.name == name })
            else {
                XCTFail("unknown preset in: \(block)")
                continue
            }
            var values: [String: Double] = [:]
            for m in value.matches(in: block, range: range) {
                values[String(block[Range(m.range(at: 1), in: block)!])] = Double(
                    block[Range(m.range(at: 2), in: block)!])
            }
            XCTAssertEqual(Self.bandSymbols.map { values[$0] ?? .nan }, preset.gains, name)
            XCTAssertEqual(values["preset"], Double(preset.index), name)
            XCTAssertNil(values["preamp"], "presets leave the preamp alone")
        }
    }

    /// lv2apply (one frame per run()) with Rock's band values equals `IPodEQKernel` with the Rock preset.
    func testApplyMatchesTheKernel() throws {
        let input = TestSupport.directory.appendingPathComponent("lv2-noise.wav").path
        let output = TestSupport.directory.appendingPathComponent("lv2-rock.wav").path
        try TestSupport.run([
            "sox", "-q", "-n", "-r", "48000", "-c", "2", "-e", "floating-point", "-b", "32", input,
            "synth", "0.5", "whitenoise", "pinknoise", "gain", "-6",
        ])
        let rock = try XCTUnwrap(IPodEQPreset.named("Rock"))
        var arguments = ["lv2apply", "-i", input, "-o", output]
        for (symbol, gain) in zip(Self.bandSymbols, rock.gains) { arguments += ["-c", symbol, "\(gain)"] }
        _ = try lilvTool(arguments + ["-c", "preset", "\(rock.index)", Self.uri])

        let source = try SoundFile(path: input)
        let result = try SoundFile(path: output)
        XCTAssertEqual(result.channels, 2)
        XCTAssertEqual(result.frames, source.frames)
        let frames = source.frames
        // The built-in node's kernel, set to Rock at creation (no glide), on the same input.
        let state = UnsafeMutablePointer<SIMD16<Float>>.allocate(capacity: 2 * IPodEQKernel.stateVectors)
        state.initialize(repeating: SIMD16<Float>(), count: 2 * IPodEQKernel.stateVectors)
        defer { state.deallocate() }
        var kernel = IPodEQKernel(
            state: state, coefficients: IPodEQSettings(gains: rock.gains, preamp: 0).coefficients(sampleRate: 48000),
            rampSamples: 960)
        var planar = (0..<2 * frames).map { source.samples[($0 % frames) * 2 + $0 / frames] }
        planar.withUnsafeMutableBufferPointer {
            kernel.process(
                input: $0.baseAddress!, output: $0.baseAddress!, channelStride: frames, channels: 2, frames: frames)
        }
        var difference: Float = 0
        for i in 0..<frames {
            for c in 0..<2 { difference = max(difference, abs(result.samples[i * 2 + c] - planar[c * frames + i])) }
        }
        print("LV2 plugin vs IPodEQKernel, Rock, \(frames) frames: max abs difference \(difference)")
        XCTAssertLessThanOrEqual(difference, 1e-5)
        XCTAssertGreaterThan(TestSupport.peak(planar), 0.1)
    }
}
