import Foundation
import XCTest

@testable import GraphHost

/// The `ladspa` node kind with Debian's swh LADSPA plugins (swh-plugins): gains and live changes exact, a filter
/// equal to the LADSPA SDK's own host (applyplugin), port hints as parameters, bad settings named by their paths.
final class LADSPANodeTests: XCTestCase {
    func graph(channels: Int = 2, input: String, node: String, name: String) -> String {
        TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": \(channels), "maxFrames": 4096 },
              "nodes": [ { "id": "song", "type": "stream", "url": "\(input)" },
                         \(node),
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """, name: name)
    }

    /// swh's Simple amplifier (a mono plugin, run once per channel of a stereo bus) at −6 dB, then at 0 dB from a
    /// `set` at 0.5 s: each sample is the input's times the gain.
    func testAnAmplifierScalesByItsGainAndFollowsLiveSet() throws {
        let sine = try TestSupport.sine(seconds: 1)
        let dry = try TestSupport.renderStream(sine)
        let path = graph(
            input: sine,
            node: """
                { "id": "fx", "type": "ladspa", "plugin": "amp_1181", "label": "amp",
                  "controls": { "amps_gain_db": -6 } }
                """,
            name: "ladspa-amp")
        let wet = try TestSupport.render(
            path,
            events: [TimedCommand(frame: 24000, request: .node(try NodeRequest.parse("set fx amps_gain_db 0")))]
        ).samples
        XCTAssertEqual(wet.count, dry.count)
        let gain = Float(pow(10, -6.0 / 20))
        for i in 0..<(2 * 24000) { XCTAssertEqual(wet[i], dry[i] * gain, accuracy: 1e-6, "sample \(i)") }
        for i in (2 * 24000)..<dry.count { XCTAssertEqual(wet[i], dry[i], accuracy: 1e-6, "sample \(i)") }
        XCTAssertGreaterThan(dry.map(abs).max() ?? 0, 0.4)
    }

    /// A plugin without audio outputs (cmt's peak envelope tracker, an analyser) passes its input on unchanged, and
    /// what it measures is its control output, which `status` shows.
    func testAnAnalyserPassesItsInputOnAndReportsItsControlOutput() throws {
        let sine = try TestSupport.sine(seconds: 1)
        let dry = try TestSupport.renderStream(sine, channels: 1)
        let path = graph(
            channels: 1, input: sine,
            node: #"{ "id": "fx", "type": "ladspa", "plugin": "cmt", "label": "track_peak", "#
                + #""controls": { "smoothing_factor": 0.999 } }"#,
            name: "ladspa-peak")
        let session = try TestSupport.session(path)
        defer { session.close() }
        var out: [Float] = []
        // Half a second: the envelope is read while the sine plays.
        _ = try OfflineRenderer(session: session).render(durationFrames: 24000, frameSizes: nil) {
            out.append(contentsOf: UnsafeBufferPointer(start: $0, count: $1))
        }
        XCTAssertEqual(out, Array(dry[..<24000]))
        // The envelope, smoothed over about 1000 samples, of a sine of peak 0.5: |sin| averages 2/π of the peak.
        let envelope = try XCTUnwrap(session.graph.pluginOutputs["fx"]?["output"])
        XCTAssertEqual(envelope, TestSupport.peak(dry) * 2 / .pi, accuracy: 0.03)
    }

    /// With no LADSPA_PATH graphhost searches every folder Debian's PipeWire filter-chain searches (its multiarch
    /// folder included, where omins installs), after the user's and the local ones.
    func testTheDefaultPathHoldsFilterChainsFolders() throws {
        let module = try Data(
            contentsOf: URL(
                fileURLWithPath: "/usr/lib/x86_64-linux-gnu/pipewire-0.3/libpipewire-module-filter-chain.so"))
        let start = try XCTUnwrap(module.firstRange(of: Data("/usr/lib64/ladspa:".utf8))).lowerBound
        let end = try XCTUnwrap(module[start...].firstIndex(of: 0))
        // Built as the compiled-in path followed by the library folder's "/ladspa".
        let theirs = (String(decoding: module[start..<end], as: UTF8.self) + "/ladspa").split(separator: ":")
        let ours = LADSPALibraries(environment: ["HOME": "/nonexistent"]).searchPath.split(separator: ":")
        XCTAssertEqual(ours.first, "~/.ladspa")
        for folder in theirs where !folder.hasPrefix("/usr/lib64") {
            XCTAssertTrue(ours.contains(folder), "\(folder) is not in \(ours)")
        }
        XCTAssertTrue(ours.contains("/usr/lib/x86_64-linux-gnu/ladspa"))
    }

    /// swh's Single band parametric (named by unique id, +9 dB at 1 kHz, one octave) on pink noise: graphhost's
    /// render equals what the LADSPA SDK's applyplugin writes (16-bit, so within one step), and the plugin changed it.
    func testAParametricEQRendersAsTheLADSPASDKsHostDoes() throws {
        let folder = TestSupport.directory.appendingPathComponent("ladspa-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let input = folder.appendingPathComponent("noise.wav").path
        let reference = folder.appendingPathComponent("applyplugin.wav").path
        try TestSupport.run([
            "sox", "-q", "-n", "-r", "48000", "-c", "1", "-b", "16", input, "synth", "1", "pinknoise", "gain", "-10",
        ])
        try TestSupport.run([
            "env", "LADSPA_PATH=/usr/lib/ladspa", "applyplugin", input, reference, "single_para_1203.so", "singlePara",
            "9", "1000", "1",
        ])
        let path = graph(
            channels: 1, input: input,
            node: """
                { "id": "fx", "type": "ladspa", "uniqueID": 1203,
                  "controls": { "gain_db": 9, "frequency_hz": 1000, "bandwidth_octaves": 1 } }
                """,
            name: "ladspa-para")
        let ours = try TestSupport.render(path).samples
        let theirs = try TestSupport.renderStream(reference, channels: 1)
        let dry = try TestSupport.renderStream(input, channels: 1)
        XCTAssertEqual(ours.count, theirs.count)
        let step: Float = 1.0 / 32768
        var changed: Float = 0
        for i in 0..<min(ours.count, theirs.count) {
            XCTAssertEqual(ours[i], theirs[i], accuracy: step * 1.01, "sample \(i)")
            changed = max(changed, abs(ours[i] - dry[i]))
        }
        XCTAssertGreaterThan(changed, 0.05)
    }

    /// The hints of swh's AM pitchshifter and Single band parametric as parameters: a logarithmic range with its
    /// default, an integer one, a range in fractions of the sample rate given in Hz with its 440 Hz default; and the
    /// symbols `plugins --ladspa` prints.
    func testPortHintsBecomeParameters() throws {
        let pitch = try XCTUnwrap(LADSPALibraries.shared.plugin(id: 1433)).at(sampleRate: 48000).descriptor.parameters
        let shift = try XCTUnwrap(pitch.first { $0.id == ParameterID("pitch_shift") })
        XCTAssertEqual([shift.minimum, shift.maximum, shift.defaultValue], [0.25, 4, 1])
        XCTAssertEqual(shift.curve, .log)
        let buffer = try XCTUnwrap(pitch.first { $0.id == ParameterID("buffer_size") })
        XCTAssertEqual(buffer.valueType, .int)
        XCTAssertEqual([buffer.minimum, buffer.maximum, buffer.defaultValue], [1, 7, 4])
        let para = try XCTUnwrap(LADSPALibraries.shared.plugin(id: 1203)).at(sampleRate: 48000).descriptor.parameters
        let frequency = try XCTUnwrap(para.first { $0.id == ParameterID("frequency_hz") })
        XCTAssertEqual(frequency.maximum, 0.4 * 48000, accuracy: 0.01)
        XCTAssertEqual(frequency.defaultValue, 440)
        let listed = try TestSupport.graphhost(["plugins", "--ladspa", "amplifier"])
        XCTAssertEqual(listed.status, 0, listed.err)
        XCTAssertTrue(
            listed.out.contains("1181 amp\n  name: Simple amplifier\n  library: /usr/lib/ladspa/amp_1181.so"),
            listed.out)
        XCTAssertTrue(listed.out.contains("port 0 amps_gain_db (control in, -70…70 default 0)"), listed.out)
    }

    /// A LADSPA plugin that writes NaN (Tests/Fixtures/probe-faults, built here) is silenced by the output guard like
    /// an LV2 plugin, and the report names the node and the plugin; what leaves the graph stays finite.
    func testNaNFromALADSPAPluginIsSilencedAndNamed() throws {
        let folder = TestSupport.directory.appendingPathComponent("ladspa-nan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let library = folder.appendingPathComponent("nan.so").path
        try TestSupport.run([
            "cc", "-shared", "-fPIC", "-O2", "-DFAULT=NAN_OUT", "-o", library,
            TestPlugins.fixtures + "/probe-faults/ladspa_faults.c", "-lm",
        ])
        let path = graph(
            input: try TestSupport.sine(seconds: 1),
            node: #"{ "id": "fx", "type": "ladspa", "plugin": "\#(library)", "label": "nan" }"#, name: "ladspa-nan")
        let output = folder.appendingPathComponent("out.wav").path
        let rendered = try TestSupport.graphhost(["render", path, "-o", output])
        XCTAssertEqual(rendered.status, 0, rendered.err)
        XCTAssertTrue(
            rendered.err.contains("node 'fx' (nan (4242001) in \(library)) produced NaN, Inf or a burst"), rendered.err)
        let samples = try TestSupport.render(path).samples
        XCTAssertTrue(samples.allSatisfy(\.isFinite))
        XCTAssertGreaterThan(samples.prefix(2 * 4096).map(abs).max() ?? 0, 0.4, "the first runs pass the sine")
        // Runs of up to 4096 frames: from the 10th on (at the latest from frame 40960), every slice is silenced.
        XCTAssertEqual(samples.suffix(2 * 4000).map(abs).max(), 0)
    }

    /// Each bad setting is named by its JSON path, with what would fit.
    func testBadSettingsAreNamed() throws {
        let sine = try TestSupport.sine(seconds: 1)
        let cases: [(String, String)] = [
            (
                #"{ "id": "fx", "type": "ladspa", "plugin": "no_such_1", "label": "x" }"#,
                "nodes[1].plugin: no LADSPA library 'no_such_1' in"
            ),
            (
                #"{ "id": "fx", "type": "ladspa", "plugin": "amp_1181.so", "label": "amplifier" }"#,
                "nodes[1].label: no plugin labelled 'amplifier' in /usr/lib/ladspa/amp_1181.so; labels: amp"
            ),
            (
                #"{ "id": "fx", "type": "ladspa", "uniqueID": 1181, "controls": { "gain": 3 } }"#,
                "nodes[1].controls.gain: unknown control 'gain'; controls: amps_gain_db"
            ),
            (
                #"{ "id": "fx", "type": "ladspa", "uniqueID": 1181, "label": "amp" }"#,
                "a ladspa node names its plugin by \"plugin\" (its library) and \"label\", or by \"uniqueID\" alone"
            ),
            (
                #"{ "id": "fx", "type": "ladspa", "uniqueID": 99999 }"#,
                "nodes[1].uniqueID: no LADSPA plugin with unique id 99999 in"
            ),
        ]
        for (index, (node, expected)) in cases.enumerated() {
            let path = graph(input: sine, node: node, name: "ladspa-bad-\(index)")
            let result = try TestSupport.graphhost(["validate", path])
            XCTAssertNotEqual(result.status, 0, node)
            XCTAssertTrue(result.err.contains(expected), "\(node): \(result.err)")
        }
    }
}
