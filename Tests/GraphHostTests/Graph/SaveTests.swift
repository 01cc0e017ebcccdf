import XCTest

@testable import GraphHost

/// `save FILE` writes the live graph; `load` resets kept nodes that changed live to the file's values.
final class SaveTests: XCTestCase {

    /// A graph with every kind of live setting: mixer volumes, an EQ, an LV2 plugin, a chain node and a transport.
    static func graph(
        volumes: String = "[1]", eq: String = "\"preset\": \"Flat\"", gain: Double = 0, chain: String = "clean",
        bpm: Int = 120, media: String? = nil
    ) throws -> String {
        let song = try media ?? TestSupport.tones([200, 2000])
        return """
            { "format": { "sampleRate": 48000, "channels": 2 },
              "transport": { "bpm": \(bpm) },
              "chains": { "clean": [ { "id": "eq", "type": "ipod-eq", "preset": "Flat" } ],
                          "loud": [ { "id": "amp", "type": "lv2", "uri": "\(TestPlugins.amp)", \
            "controls": { "gain": 6 } } ] },
              "nodes": [ { "id": "song", "type": "stream", "url": "\(song)" },
                         { "id": "mix", "type": "mixer", "inputs": 1, "volumes": \(volumes) },
                         { "id": "eq", "type": "ipod-eq", \(eq) },
                         { "id": "gain", "type": "lv2", "uri": "\(TestPlugins.amp)", "controls": { "gain": \(gain) } },
                         { "id": "fx", "type": "chain", "chain": "\(chain)" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "mix" }, { "from": "mix", "to": "eq" }, { "from": "eq", "to": "gain" },
                         { "from": "gain", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """
    }

    static let changes = [
        "set mix volume.0 0.5", "preset eq Jazz", "set eq band.3 4.5", "set eq preamp -3", "set gain gain -6",
        "chain fx loud", "set fx/amp gain 3", "tempo 90",
    ]

    /// What the graph is after `changes`, written by hand.
    static func changedGraph() throws -> String {
        var jazz = IPodEQPreset.named("Jazz")!.gains
        jazz[3] = 4.5
        let bands = jazz.map { Format.number($0) }.joined(separator: ", ")
        return try graph(
            volumes: "[0.5]", eq: "\"preset\": \"Jazz\", \"preamp\": -3, \"bands\": [\(bands)]", gain: -6,
            chain: "loud", bpm: 90
        )
        .replacingOccurrences(of: "\"gain\": 6", with: "\"gain\": 3")
    }

    /// The saved graph renders exactly what the same graph written by hand with the changed values renders, and
    /// differs from the original.
    func testSavedGraphRendersLikeTheChangedGraph() throws {
        let original = TestSupport.graph(try Self.graph())
        let session = try TestSupport.session(original)
        defer { session.close() }
        for line in Self.changes { try session.apply(try Command.parse(line)) }
        let saved = TestSupport.directory.appendingPathComponent("saved-\(UUID().uuidString).json").path
        try session.apply(.save(path: saved))

        let frames = 48000
        let fromSave = try TestSupport.render(saved, durationFrames: frames).samples
        let byHand = try TestSupport.render(TestSupport.graph(try Self.changedGraph()), durationFrames: frames).samples
        let unchanged = try TestSupport.render(original, durationFrames: frames).samples
        XCTAssertEqual(fromSave.count, byHand.count)
        XCTAssertTrue(fromSave == byHand, "the saved graph renders differently from the changed graph written by hand")
        XCTAssertFalse(fromSave == unchanged, "the saved graph renders like the original: the changes were not saved")
        let document = try GraphDocument.load(path: saved)
        XCTAssertEqual(document.musicalTime?.beatsPerMinute, 90)
        XCTAssertEqual(document.chainNodes.first?.chain, "loud")
    }

    /// Saved into another folder, relative media paths still resolve (the saved graph names the original folder).
    func testSaveIntoAnotherFolderKeepsRelativeMedia() throws {
        let song = try TestSupport.tones([200, 2000])
        let folder = URL(fileURLWithPath: song).deletingLastPathComponent().path
        let original = TestSupport.graph(try Self.graph(media: URL(fileURLWithPath: song).lastPathComponent))
        XCTAssertEqual(URL(fileURLWithPath: original).deletingLastPathComponent().path, folder)
        let other = FileManager.default.temporaryDirectory.appendingPathComponent("save-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        let saved = other.appendingPathComponent("moved.json").path
        let session = try TestSupport.session(original)
        try session.apply(.save(path: saved))
        session.close()
        let text = try String(contentsOfFile: saved, encoding: .utf8)
        XCTAssertTrue(text.contains("\"baseDirectory\": \"\(folder)\""), text)
        XCTAssertTrue(
            try TestSupport.render(saved, durationFrames: 4800).samples
                == TestSupport.render(original, durationFrames: 4800).samples)
    }

    /// A save that cannot be written says why and leaves nothing behind.
    func testSaveErrorsNameTheProblem() throws {
        let session = try TestSupport.session(TestSupport.graph(try Self.graph()))
        defer { session.close() }
        XCTAssertThrowsError(try session.apply(.save(path: "/nonexistent-folder/x.json"))) {
            XCTAssertTrue("\($0)".contains("/nonexistent-folder does not exist"), "\($0)")
        }
        XCTAssertThrowsError(try session.apply(.save(path: TestSupport.directory.appendingPathComponent("x.wav").path)))
        {
            XCTAssertTrue("\($0)".contains("not a .json file name"), "\($0)")
        }
    }

    /// `load` of the same file undoes live changes to kept nodes: the mixer set to -12 dB live comes back to 0 dB.
    func testLoadResetsLiveChangesToTheFilesValues() throws {
        let path = TestSupport.graph(try Self.graph())
        let rate = 48000.0
        let events = [
            TimedCommand(frame: 24000, request: .node(try NodeRequest.parse("set mix volume.0 0.25"))),
            TimedCommand(frame: 72000, request: .load(path: path)),
        ]
        let out = try TestSupport.render(path, durationFrames: 120000, events: events).samples
        let before = ToneMeasure.amplitude(out, 200, start: 0.2, seconds: 0.25, rate: rate)
        let changed = ToneMeasure.amplitude(out, 200, start: 1.0, seconds: 0.25, rate: rate)
        let reloaded = ToneMeasure.amplitude(out, 200, start: 2.0, seconds: 0.25, rate: rate)
        XCTAssertEqual(ToneMeasure.dB(changed / before), -12.04, accuracy: 0.2)
        XCTAssertEqual(ToneMeasure.dB(reloaded / before), 0, accuracy: 0.2, "the reload kept the live volume")
    }
}
