import Foundation
import Synchronization
import XCTest

@testable import GraphHost

/// Sessions found by their SAP announcements: the announcement PipeWire's RTP sink sends is read (its name, address,
/// port and format), a `sap://` URL's parts and errors, and a receiver on 127.0.0.1 that finds its session by name,
/// ignores others, follows the session to a new port and waits again after a deletion.
final class SAPDiscoveryTests: XCTestCase {
    /// An announcement laid out as module-rtp-sink 0.3.65 sends it (`send_sap`): header, origin, MIME type, SDP.
    static func announcement(
        name: String, address: String = "127.0.0.1", port: Int, encoding: String = "L16", rate: Int = 48000,
        channels: Int = 2, deletion: Bool = false
    ) -> [UInt8] {
        var bytes: [UInt8] = [deletion ? 0x24 : 0x20, 0, 0x12, 0x34, 127, 0, 0, 1]
        bytes += Array("application/sdp".utf8) + [0]
        bytes += Array(
            """
            v=0
            o=tester 3900000000 0 IN IP4 127.0.0.1
            s=\(name)
            c=IN IP4 \(address)
            t=3900000000 0
            a=recvonly
            a=tool:PipeWire 0.3.65
            m=audio \(port) RTP/AVP 127
            a=rtpmap:127 \(encoding)/\(rate)/\(channels)
            a=type:broadcast
            a=ptime:4

            """.utf8)
        return bytes
    }

    func parse(_ bytes: [UInt8]) -> SAPAnnouncement? { bytes.withUnsafeBytes { SAPAnnouncement($0) } }

    func testAnAnnouncementGivesTheSessionsNameAddressAndFormat() throws {
        let found = try XCTUnwrap(parse(Self.announcement(name: "Studio A", address: "239.1.2.3", port: 5004)))
        XCTAssertEqual(found.name, "Studio A")
        XCTAssertFalse(found.isDeletion)
        XCTAssertEqual(found.session, try RTPSession(url: "rtp://239.1.2.3:5004?rate=48000&channels=2&format=L16"))
        let l24 = try XCTUnwrap(
            parse(Self.announcement(name: "x", port: 6000, encoding: "L24", rate: 44100, channels: 1)))
        XCTAssertEqual(
            [l24.session.format.rawValue, "\(l24.session.rate)", "\(l24.session.channels)"], ["L24", "44100", "1"])
        XCTAssertEqual(parse(Self.announcement(name: "Studio A", port: 5004, deletion: true))?.isDeletion, true)
        // Not ours: another payload, an encrypted or compressed message, another SAP version, a cut message.
        XCTAssertNil(parse(Self.announcement(name: "x", port: 5004, encoding: "opus")))
        for flags: UInt8 in [0x22, 0x21, 0x40] {
            var bytes = Self.announcement(name: "x", port: 5004)
            bytes[0] = flags
            XCTAssertNil(parse(bytes), "flags \(flags)")
        }
        XCTAssertNil(parse(Array(Self.announcement(name: "x", port: 5004).prefix(30))))
    }

    func testTheURLGivesAddressPortAndSession() throws {
        let query = try SAPQuery(url: "sap://239.255.0.1:9876?session=Studio%20A")
        XCTAssertEqual([query.address, "\(query.port)", query.sessionName], ["239.255.0.1", "9876", "Studio A"])
        let any = try SAPQuery(url: "sap://")
        XCTAssertNil(any.address)
        XCTAssertEqual(any.port, 9875)
        XCTAssertNil(any.sessionName)
        XCTAssertTrue(any.followsClock)
        XCTAssertFalse(try SAPQuery(url: "sap://?clock=shared").followsClock)
        XCTAssertFalse(try RTPSession(url: "rtp://0.0.0.0:5004?clock=shared").followsClock)
        XCTAssertTrue(try RTPSession(url: "rtp://0.0.0.0:5004").followsClock)
        for (url, says) in [
            ("sap://studio.local", "not an IPv4 address"),
            ("sap://?name=x", "unknown parameter 'name' (session, clock)"),
            ("sap://?session=", "give the session's name"), ("sap://127.0.0.1:70000", "outside 1…65535"),
            ("sap://?clock=ptp", "clock 'ptp': use follow or shared"),
        ] {
            XCTAssertThrowsError(try SAPQuery(url: url), url) { XCTAssertTrue("\($0)".contains(says), "\(url): \($0)") }
        }
        // A sent session is named in its rtp:// URL; a stream receives one by name with sap://.
        XCTAssertEqual(try RTPSession(url: "rtp://10.1.0.2:5004?session=Studio%20A").name, "Studio A")
        XCTAssertTrue(
            try RTPSession(url: "rtp://10.1.0.2:5004?session=Studio%20A").sinkArguments(rate: 48000, channels: 2)
                .contains(#"sess.name = "Studio A""#))
        XCTAssertThrowsError(try RTPSession(url: "rtp://10.1.0.2:5004?session=a%22b")) {
            XCTAssertTrue("\($0)".contains("without quotes"), "\($0)")
        }
        XCTAssertThrowsError(try StreamNode.resolve("rtp://127.0.0.1:5004?session=x", base: TestSupport.directory)) {
            XCTAssertTrue("\($0)".contains("sap://?session=NAME"), "\($0)")
        }
    }

    /// A receiver listening for "Studio" on 127.0.0.1: another session's announcement and packets are ignored; the
    /// announced session plays, its name the stream's title; an announcement moving it to another port is followed;
    /// after a deletion nothing plays until it is announced again.
    func testAReceiverFindsFollowsAndLosesItsSession() throws {
        let sapPort = try UDPRelay.freePort()
        let first = try UDPRelay.freePort()
        let source = try RTPPacketSource(
            discovering: SAPQuery(url: "sap://127.0.0.1:\(sapPort)?session=Studio"), url: "sap test")
        nonisolated(unsafe) let decoder = RTPDecoder(source: source)
        let sender = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(sender) }
        func send(_ bytes: [UInt8], port: Int) {
            var to = sockaddr_in()
            to.sin_family = sa_family_t(AF_INET)
            to.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, "127.0.0.1", &to.sin_addr)
            _ = bytes.withUnsafeBytes { b in
                withUnsafePointer(to: &to) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(sender, b.baseAddress, b.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
        }
        // The decoder on a thread of its own, as the stream's decoder thread runs it: the first sample of each block.
        let played = Mutex<[Float]>([])
        let finished = Atomic<Bool>(false)
        let thread = Thread {
            while (try? decoder.decodeNext { samples, _, _, _ in played.withLock { $0.append(samples[0]) } }) == true {}
            finished.store(true, ordering: .releasing)
        }
        thread.start()
        defer { source.cancel() }
        func packet(_ sequence: UInt16, _ value: Int16) -> [UInt8] {
            RTPDecoderTests.packet(sequence: sequence, timestamp: UInt32(sequence) * 192, frames: 192, value: value)
        }
        send(Self.announcement(name: "Other", port: first), port: sapPort)
        send(Self.announcement(name: "Studio", port: first), port: sapPort)
        XCTAssertTrue(try TestSupport.waitUntil { source.session?.port == first })
        XCTAssertEqual(source.announcedName, "Studio")
        send(packet(1, 16384), port: first)
        XCTAssertTrue(TestSupport.waitUntil { played.withLock { $0 } == [0.5] })
        // Another session's announcement moving to another port is not followed.
        let second = try UDPRelay.freePort()
        send(Self.announcement(name: "Other", port: second), port: sapPort)
        send(packet(2, 8192), port: first)
        XCTAssertTrue(TestSupport.waitUntil { played.withLock { $0 } == [0.5, 0.25] })
        // Moved to another port: the old one is closed, the new one plays.
        send(Self.announcement(name: "Studio", port: second), port: sapPort)
        XCTAssertTrue(try TestSupport.waitUntil { source.session?.port == second })
        send(packet(3, 4096), port: second)
        XCTAssertTrue(TestSupport.waitUntil { played.withLock { $0 } == [0.5, 0.25, 0.125] })
        // Deleted: nothing is received until it is announced again, and it then starts afresh (no gap to fill).
        send(Self.announcement(name: "Studio", port: second, deletion: true), port: sapPort)
        XCTAssertTrue(try TestSupport.waitUntil { source.session == nil })
        send(packet(4, 28672), port: second)
        send(Self.announcement(name: "Studio", port: second), port: sapPort)
        XCTAssertTrue(try TestSupport.waitUntil { source.session?.port == second })
        send(packet(10, 2048), port: second)
        XCTAssertTrue(TestSupport.waitUntil { played.withLock { $0 } == [0.5, 0.25, 0.125, 0.0625] })
        XCTAssertEqual(source.counters.snapshot.lost, 0)
        source.cancel()
        XCTAssertTrue(TestSupport.waitUntil { finished.load(ordering: .acquiring) })
        XCTAssertEqual(decoder.tags?.title, "Studio")
        XCTAssertEqual(decoder.info?.sampleRate, 48000)
    }
}

/// The whole path on 127.0.0.1 in one private daemon: graphhost sends its output through PipeWire's RTP sink,
/// announced as "Studio"; a second graphhost finds it by name (`sap://?session=Studio`) from PipeWire's own
/// announcement and records the source sample for sample (one machine, one clock: `clock=shared`, not resampled),
/// with the session's name as the stream's title.
final class SAPSessionTests: XCTestCase {
    func testASessionFoundByItsAnnouncementPlaysTheSource() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let port = try UDPRelay.freePort()
        let source = TestSupport.directory.appendingPathComponent("sap-source.wav").path
        _ = try TestSupport.run([
            "sox", TestSupport.root.appendingPathComponent("Graphs/media/demo.mp3").path, "-r", "48000", "-b", "16",
            "-c", "2", source, "trim", "0", "20",
        ])
        let sending = TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2 },
              "nodes": [ { "id": "song", "type": "stream", "url": "\(source)" },
                         { "id": "net", "type": "output", "rtp": "rtp://127.0.0.1:\(port)?session=Studio" } ],
              "links": [ { "from": "song", "to": "net" } ] }
            """, name: "sap-send")
        let receiving = TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2 },
              "nodes": [ { "id": "net", "type": "stream", "url": "sap://?session=Studio&clock=shared", \
            "bufferSeconds": 0.1 },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "net", "to": "out" } ] }
            """, name: "sap-receive")
        let record = TestSupport.directory.appendingPathComponent("sap-record.wav").path
        let socket = TestSupport.directory.appendingPathComponent("sap-\(getpid())/r.sock").path
        let receiver = try pw.graphhost([
            "run", receiving, "--duration", "12", "--latency", "256", "--record", record, "--socket", socket,
        ])
        defer { receiver.interrupt() }
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        let sender = try pw.graphhost(["run", sending, "--duration", "16", "--latency", "256", "--name", "sap-send"])
        defer { sender.interrupt() }

        func stream() throws -> [String: Any] {
            try XCTUnwrap((try control.status()["streams"] as? [[String: Any]])?.first)
        }
        XCTAssertTrue(
            try TestSupport.waitUntil(timeout: 30) {
                ((try stream()["rtp"] as? [String: Any])?["received"] as? Int ?? 0) > 500
            }, "no packets of the announced session")
        let found = try stream()
        XCTAssertEqual(found["title"] as? String, "Studio")
        XCTAssertEqual(found["codec"] as? String, "rtp L16")
        let result = receiver.wait(timeout: 60)
        XCTAssertEqual(result.status, 0, result.err)
        let rtp = try XCTUnwrap(found["rtp"] as? [String: Any])
        XCTAssertEqual(rtp["lost"] as? Int, 0)

        // A stretch of the source sits in the recording sample for sample.
        let recorded = try LoudnessReference.samples(record)
        let original = try LoudnessReference.samples(source)
        let probe = Array(original[(4 * 96000)..<(4 * 96000 + 4096)])
        let at = recorded.indices.dropLast(4096).first { i in
            recorded[i] == probe[0] && zip(recorded[i..<(i + 4096)], probe).allSatisfy { $0 == $1 }
        }
        XCTAssertNotNil(at, "the source's fifth second is not in the recording intact")
    }
}
