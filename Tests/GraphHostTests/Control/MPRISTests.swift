import Foundation
import XCTest

@testable import GraphHost

/// MPRIS on the private session bus of a private PipeWire daemon, reached with busctl, dbus-monitor and playerctl as
/// a desktop would: Pause and Play change the `--record` output and PlaybackStatus, PlayPause toggles, Stop pauses and
/// reads "Stopped", Metadata carries the MP3's ID3 tags, file URL and length, Position follows the stream, and
/// PropertiesChanged is emitted.
final class MPRISTests: XCTestCase {
    static let path = "/org/mpris/MediaPlayer2"

    /// A dbus-monitor of the player's PropertiesChanged signals, once it listens, and what it has seen so far.
    static func monitorProperties(_ pw: HeadlessPipeWire) throws -> (HeadlessPipeWire.Running, () -> String) {
        let monitor = try HeadlessPipeWire.Running(
            URL(fileURLWithPath: "/usr/bin/dbus-monitor"),
            ["--session", "type='signal',interface='org.freedesktop.DBus.Properties',path='\(path)'"],
            environment: pw.environment)
        let monitored = { (try? String(contentsOf: monitor.outURL, encoding: .utf8)) ?? "" }
        XCTAssertTrue(TestSupport.waitUntil { monitored().contains("NameAcquired") }, monitored())
        return (monitor, monitored)
    }
    static let player = "org.mpris.MediaPlayer2.Player"

    /// A 30 s MP3 with ID3 tags set by lame.
    static func taggedMP3(title: String, artist: String) throws -> String {
        let path = TestSupport.directory.appendingPathComponent("tagged-\(UUID().uuidString).mp3").path
        let wav = path + ".wav"
        try TestSupport.run([
            "sox", "-q", "-n", "-r", "48000", "-c", "2", wav, "synth", "30",
            "sine", "220-880", "pinknoise", "tremolo", "3", "60", "gain", "-n", "-3",
        ])
        try TestSupport.run(["lame", "--quiet", "-b", "160", "--tt", title, "--ta", artist, wav, path])
        return path
    }

    /// A bus client of one run's MPRIS name, through busctl on the private session bus.
    struct Bus {
        let name: String
        let environment: [String: String]

        func busctl(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
            try HeadlessPipeWire.execute(
                URL(fileURLWithPath: "/usr/bin/busctl"), ["--user"] + arguments, environment: environment)
        }

        func call(_ method: String, interface: String = MPRISTests.player) throws {
            let r = try busctl(["call", name, MPRISTests.path, interface, method])
            guard r.status == 0 else { throw TestSupport.ToolFailure(description: "\(method): \(r.err)") }
        }

        /// A property as busctl's JSON: its "data".
        func property(_ property: String, interface: String = MPRISTests.player) throws -> Any? {
            let r = try busctl(["--json=short", "get-property", name, MPRISTests.path, interface, property])
            guard r.status == 0 else { throw TestSupport.ToolFailure(description: "\(property): \(r.err)") }
            return (try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])?["data"]
        }

        func playbackStatus() throws -> String? { try property("PlaybackStatus") as? String }
        func position() throws -> Double { Double(try property("Position") as? Int ?? -1) / 1e6 }

        /// Metadata as key → value.
        func metadata() throws -> [String: Any] {
            let entries = try property("Metadata") as? [String: [String: Any]] ?? [:]
            return entries.compactMapValues { $0["data"] }
        }

        /// Whether the name is on the bus.
        /// Asks the bus itself (`busctl status` needs the owner's credentials, which a chroot does not give).
        func isOwned() throws -> Bool {
            try busctl([
                "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner", "s",
                name,
            ]).out
                .trimmingCharacters(in: .whitespacesAndNewlines) == "b true"
        }
    }

    func testPlayPauseStopMetadataAndPositionOverTheSessionBus() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let mp3 = try Self.taggedMP3(title: "Bus Title", artist: "Bus Artist")
        let graph = TestSupport.streamGraph(mp3)
        let socket = TestSupport.directory.appendingPathComponent("mpris/mpris.sock").path
        let recording = TestSupport.directory.appendingPathComponent("mpris-record.wav").path
        // The run's name is not a valid bus name element as it stands: space and dash become underscores.
        let run = try pw.graphhost([
            "run", graph, "--name", "mpris test-1", "--socket", socket, "--latency", "256", "--record", recording,
        ])
        let control = pw.control(socket)
        let bus = Bus(name: "org.mpris.MediaPlayer2.graphhost.mpris_test_1", environment: pw.environment)
        XCTAssertTrue(control.waitForSocket())
        XCTAssertTrue(try TestSupport.waitUntil { try bus.isOwned() }, run.errorText)
        XCTAssertTrue(
            run.errorText.contains("MPRIS: org.mpris.MediaPlayer2.graphhost.mpris_test_1 on the session bus"),
            run.errorText)

        // The root interface.
        XCTAssertEqual(try bus.property("Identity", interface: "org.mpris.MediaPlayer2") as? String, "graphhost")
        XCTAssertEqual(try bus.property("CanQuit", interface: "org.mpris.MediaPlayer2") as? Bool, true)
        XCTAssertEqual(try bus.property("CanSeek") as? Bool, false)
        XCTAssertEqual(try bus.property("Rate") as? Double, 1)

        // Metadata: the ID3 tags (read once the decoder started), the file URL and the length.
        XCTAssertTrue(
            try TestSupport.waitUntil { try bus.metadata()["xesam:title"] as? String == "Bus Title" },
            "\((try? bus.metadata()) ?? [:])")
        let metadata = try bus.metadata()
        XCTAssertEqual(metadata["xesam:artist"] as? [String], ["Bus Artist"])
        XCTAssertEqual(metadata["xesam:url"] as? String, URL(fileURLWithPath: mp3).absoluteString)
        let length = Double(try XCTUnwrap(metadata["mpris:length"] as? Int)) / 1e6
        XCTAssertEqual(length, 30, accuracy: 0.05)
        XCTAssertTrue((metadata["mpris:trackid"] as? String ?? "").hasPrefix("/org/graphhost/track/"), "\(metadata)")

        // Position follows the stream.
        XCTAssertEqual(try bus.playbackStatus(), "Playing")
        let early = try bus.position()
        XCTAssertTrue(try TestSupport.waitUntil { try bus.position() >= early + 0.5 })

        // PropertiesChanged, seen by a monitor on the bus.
        let (monitor, monitored) = try Self.monitorProperties(pw)
        defer { monitor.interrupt() }

        // Pause: the recording goes silent after the fade, the stream holds its place.
        // Positions read before and after a call bound the frame where it took effect.
        XCTAssertTrue(try control.waitForPosition(2))
        let beforePause = try control.position()
        try bus.call("Pause")
        let pausedAt = try control.position()
        XCTAssertEqual(try bus.playbackStatus(), "Paused")
        XCTAssertTrue(
            TestSupport.waitUntil { monitored().contains("\"PlaybackStatus\"") && monitored().contains("\"Paused\"") },
            monitored())
        let heldPosition = try bus.position()
        XCTAssertTrue(try control.waitForPosition(pausedAt + 1.2))
        XCTAssertEqual(try bus.position(), heldPosition, accuracy: 0.05, "a paused stream does not advance")

        // Play: sound again.
        let beforePlay = try control.position()
        try bus.call("Play")
        let playedAt = try control.position()
        XCTAssertEqual(try bus.playbackStatus(), "Playing")
        XCTAssertTrue(TestSupport.waitUntil { monitored().contains("\"Playing\"") }, monitored())
        XCTAssertTrue(try control.waitForPosition(playedAt + 1.2))

        // PlayPause toggles; Stop pauses and reads "Stopped" until the next play.
        try bus.call("PlayPause")
        XCTAssertEqual(try bus.playbackStatus(), "Paused")
        try bus.call("PlayPause")
        XCTAssertEqual(try bus.playbackStatus(), "Playing")
        try bus.call("Stop")
        XCTAssertEqual(try bus.playbackStatus(), "Stopped")
        XCTAssertTrue(TestSupport.waitUntil { monitored().contains("\"Stopped\"") }, monitored())
        XCTAssertEqual(try control.status()["playing"] as? Bool, false)
        XCTAssertEqual(try control.ctl(["play"]).status, 0)
        XCTAssertTrue(
            try TestSupport.waitUntil { try bus.playbackStatus() == "Playing" }, "a play from the socket ends Stopped")

        // Refused methods say why and change nothing.
        let seek = try bus.busctl(["call", bus.name, Self.path, Self.player, "Seek", "x", "1000000"])
        XCTAssertNotEqual(seek.status, 0)
        XCTAssertTrue(seek.err.contains("cannot Seek"), seek.err)
        XCTAssertEqual(try bus.playbackStatus(), "Playing")

        // Quit ends the run.
        let endedAt = try control.position()
        XCTAssertTrue(try control.waitForPosition(endedAt + 0.5))
        try bus.call("Quit", interface: "org.mpris.MediaPlayer2")
        let result = run.wait(timeout: 20)
        XCTAssertEqual(result.status, 0, result.err)

        // The recording: sound before the pause, silence from the end of the fade to the play, sound after it.
        let samples = try SoundFile(path: recording).samples
        func peak(_ from: Double, _ to: Double) -> Float {
            let a = max(0, Int(from * 48000) * 2)
            let b = min(samples.count, Int(to * 48000) * 2)
            return a < b ? TestSupport.peak(Array(samples[a..<b])) : -1
        }
        XCTAssertGreaterThan(peak(beforePause - 1, beforePause - 0.05), 0.05, "sound before the pause")
        XCTAssertEqual(peak(pausedAt + 0.1, beforePlay), 0, "silence while paused")
        XCTAssertGreaterThan(peak(playedAt + 0.1, playedAt + 1.1), 0.05, "sound after play")
    }

    /// Without a session bus the run plays on and says MPRIS is off, in one line; --no-mpris leaves the bus alone.
    func testNoSessionBusAndNoMPRIS() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let graph = TestSupport.streamGraph(try TestSupport.mp3(rate: 48000, channels: 2, seconds: 2))
        var noBus = pw.environment
        noBus["DBUS_SESSION_BUS_ADDRESS"] =
            "unix:path=" + TestSupport.directory.appendingPathComponent("no-such-bus").path
        let without = try pw.graphhost(["run", graph, "--name", "nobus", "--duration", "0.5"], extraEnvironment: noBus)
            .wait(timeout: 30)
        XCTAssertEqual(without.status, 0, without.err)
        XCTAssertEqual(without.err.components(separatedBy: "MPRIS off: no session bus").count, 2, without.err)

        let off = try pw.graphhost(["run", graph, "--name", "off", "--no-mpris", "--duration", "0.5"]).wait(timeout: 30)
        XCTAssertEqual(off.status, 0, off.err)
        XCTAssertFalse(off.err.contains("MPRIS"), off.err)
    }

    /// A second run with a name whose bus name is taken warns and plays on without MPRIS.
    func testATakenNameIsReportedAndTheRunPlaysOn() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        // Long enough that the first run still holds the name when the second starts (it ends by Quit).
        let graph = TestSupport.streamGraph(try TestSupport.sine(seconds: 40))
        let first = try pw.graphhost([
            "run", graph, "--name", "twice", "--socket",
            TestSupport.directory.appendingPathComponent("twice-1.sock").path,
        ])
        let bus = Bus(name: "org.mpris.MediaPlayer2.graphhost.twice", environment: pw.environment)
        XCTAssertTrue(try TestSupport.waitUntil { try bus.isOwned() }, first.errorText)
        let second = try pw.graphhost([
            "run", graph, "--name", "twice", "--duration", "0.5",
            "--socket", TestSupport.directory.appendingPathComponent("twice-2.sock").path,
        ]).wait(timeout: 30)
        XCTAssertEqual(second.status, 0, second.err)
        XCTAssertTrue(
            second.err.contains("MPRIS off: org.mpris.MediaPlayer2.graphhost.twice is owned by another process"),
            second.err)
        try bus.call("Quit", interface: "org.mpris.MediaPlayer2")
        XCTAssertEqual(first.wait(timeout: 20).status, 0)
    }

    /// playerctl, as desktops and media-key daemons use it, finds the player and toggles it.
    func testPlayerctlSeesAndTogglesThePlayer() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let mp3 = try Self.taggedMP3(title: "Ctl Title", artist: "Ctl Artist")
        let socket = TestSupport.directory.appendingPathComponent("playerctl/p.sock").path
        let run = try pw.graphhost(["run", TestSupport.streamGraph(mp3), "--name", "pc", "--socket", socket])
        let bus = Bus(name: "org.mpris.MediaPlayer2.graphhost.pc", environment: pw.environment)
        XCTAssertTrue(try TestSupport.waitUntil { try bus.isOwned() }, run.errorText)
        func playerctl(_ arguments: [String]) throws -> String {
            let r = try HeadlessPipeWire.execute(
                URL(fileURLWithPath: "/usr/bin/playerctl"), ["-p", "graphhost.pc"] + arguments,
                environment: pw.environment)
            guard r.status == 0 else { throw TestSupport.ToolFailure(description: "playerctl \(arguments): \(r.err)") }
            return r.out.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        XCTAssertEqual(try playerctl(["status"]), "Playing")
        XCTAssertTrue(
            try TestSupport.waitUntil {
                try playerctl(["metadata", "--format", "{{artist}} - {{title}}"]) == "Ctl Artist - Ctl Title"
            })
        _ = try playerctl(["play-pause"])
        XCTAssertEqual(try playerctl(["status"]), "Paused")
        XCTAssertEqual(try pw.control(socket).status()["playing"] as? Bool, false)
        _ = try playerctl(["play-pause"])
        XCTAssertEqual(try playerctl(["status"]), "Playing")
        try bus.call("Quit", interface: "org.mpris.MediaPlayer2")
        XCTAssertEqual(run.wait(timeout: 20).status, 0)
    }

    /// An Icecast stream's ICY title "Artist - Title" reaches Metadata split in two, with the stream's URL and no
    /// length.
    func testICYTitleOfARadioStreamInMetadata() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let (dir, url) = try IcecastLoopback.start()
        defer { _ = try? TestSupport.execute(IcecastLoopback.script, ["stop", dir]) }
        let socket = TestSupport.directory.appendingPathComponent("mpris-radio/r.sock").path
        let run = try pw.graphhost(["run", TestSupport.streamGraph(url), "--name", "radio", "--socket", socket])
        let bus = Bus(name: "org.mpris.MediaPlayer2.graphhost.radio", environment: pw.environment)
        XCTAssertTrue(try TestSupport.waitUntil { try bus.isOwned() }, run.errorText)
        XCTAssertTrue(try TestSupport.waitUntil { try bus.playbackStatus() == "Playing" })
        let (monitor, monitored) = try Self.monitorProperties(pw)
        defer { monitor.interrupt() }
        XCTAssertEqual(
            try TestSupport.execute(IcecastLoopback.script, ["meta", dir, "Radio Artist - Radio Song"]).status, 0)
        XCTAssertTrue(
            TestSupport.waitUntil { monitored().contains("\"xesam:title\"") && monitored().contains("\"Radio Song\"") },
            "PropertiesChanged for Metadata: \(monitored())")
        XCTAssertTrue(
            try TestSupport.waitUntil { try bus.metadata()["xesam:title"] as? String == "Radio Song" },
            "\((try? bus.metadata()) ?? [:])")
        let metadata = try bus.metadata()
        XCTAssertEqual(metadata["xesam:artist"] as? [String], ["Radio Artist"])
        XCTAssertEqual(metadata["xesam:url"] as? String, url)
        XCTAssertNil(metadata["mpris:length"], "an endless stream has no length")
        try bus.call("Quit", interface: "org.mpris.MediaPlayer2")
        XCTAssertEqual(run.wait(timeout: 20).status, 0)
    }

    func testBusNamesAndICYTitles() {
        XCTAssertEqual(MPRISBusName.forRun(name: "living room"), "org.mpris.MediaPlayer2.graphhost.living_room")
        XCTAssertEqual(MPRISBusName.element("9lives"), "_9lives")
        XCTAssertEqual(MPRISBusName.element("café.eq-2"), "caf__eq_2")
        XCTAssertEqual(MPRISBusName.element(""), "_")
        XCTAssertEqual(MPRISTrack.split(icy: "Artist - Song - Live").artist, "Artist")
        XCTAssertEqual(MPRISTrack.split(icy: "Artist - Song - Live").title, "Song - Live")
        XCTAssertNil(MPRISTrack.split(icy: "Just a title").artist)
        XCTAssertNil(MPRISTrack.split(icy: " - Title").artist)
    }

    /// libmpg123 reads lame's ID3 tags and the exact length (the LAME header removes the encoder delay and padding).
    func testMediaTagsOfATaggedMP3() throws {
        let mp3 = try Self.taggedMP3(title: "Tagged Ünïcode", artist: "Somebody")
        let tags = try XCTUnwrap(MediaTags.read(path: mp3))
        XCTAssertEqual(tags.title, "Tagged Ünïcode")
        XCTAssertEqual(tags.artist, "Somebody")
        XCTAssertEqual(try XCTUnwrap(tags.durationSeconds), 30, accuracy: 0.01)
        let untagged = try XCTUnwrap(MediaTags.read(path: try TestSupport.mp3(rate: 44100, channels: 1, seconds: 2)))
        XCTAssertNil(untagged.title)
        XCTAssertEqual(try XCTUnwrap(untagged.durationSeconds), 2, accuracy: 0.01)
        // ID3v1 only, at the end of the file.
        let wav = TestSupport.directory.appendingPathComponent("v1.wav").path
        let v1 = wav + ".mp3"
        try TestSupport.run(["sox", "-q", "-n", "-r", "44100", "-c", "2", wav, "synth", "3", "sine", "440"])
        try TestSupport.run(["lame", "--quiet", "--id3v1-only", "--tt", "Old Title", "--ta", "Old Artist", wav, v1])
        let old = try XCTUnwrap(MediaTags.read(path: v1))
        XCTAssertEqual(old.title, "Old Title")
        XCTAssertEqual(old.artist, "Old Artist")
        XCTAssertNil(MediaTags.read(path: "/nonexistent.mp3"))
        XCTAssertNil(MediaTags.read(path: wav), "not MPEG audio")
    }
}
