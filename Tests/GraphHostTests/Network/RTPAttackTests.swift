import Foundation
import Synchronization
import XCTest

@testable import GraphHost

/// An RTP receiver attacked on its port. In one private daemon, graphhost sends a 1 kHz sine through PipeWire's RTP
/// sink to a second graphhost on 127.0.0.1, while the test sends the receiver's port random datagrams, packets of
/// another SSRC, of another payload type, of partial frames and of 65,000 bytes. The receiver's recording holds the
/// sine and nothing else (no sample beyond the sine's peak, no residual beyond concealed losses), every datagram is
/// counted by reason, and the receive latency is back at its target within two seconds of played audio. While it
/// listens, no other socket can bind its port.
final class RTPAttackTests: XCTestCase {
    func testAnAttackOnTheReceiversPortIsCountedAndNeverHeard() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let port = try UDPRelay.freePort()
        let source = TestSupport.directory.appendingPathComponent("rtp-attack-sine.wav").path
        _ = try TestSupport.run([
            "sox", "-n", "-r", "48000", "-b", "16", "-c", "2", source, "synth", "90", "sine", "1000", "vol", "0.5",
        ])
        // The attack, made before it starts (the machine's two cores are for the sender and the receiver then): a
        // thousand random datagrams, then well-formed packets of another SSRC and port, of 65,000 bytes, of another
        // payload type and of partial frames, each in batches the receiver's socket has room for.
        var random = SplitMix64(seed: 55)
        /// `count` random bytes.
        func noise(_ count: Int) -> [UInt8] {
            Array((0..<(count + 7) / 8).flatMap { _ in withUnsafeBytes(of: random.next()) { Array($0) } }.prefix(count))
        }
        /// A well-formed stereo L16 packet of `payloadBytes` bytes of full-scale noise.
        func packet(type: UInt8 = 127, ssrc: UInt32, sequence: Int, payloadBytes: Int) -> [UInt8] {
            var bytes: [UInt8] = [0x80, type, UInt8(sequence >> 8 & 0xff), UInt8(sequence & 0xff)]
            bytes += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: (sequence * 192) >> $0) }
            bytes += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: ssrc >> $0) }
            return bytes + noise(payloadBytes)
        }
        let phases: [(datagrams: [[UInt8]], batch: Int)] = [
            ((0..<1000).map { _ in noise(1 + Int.random(in: 0..<1400, using: &random)) }, 50),
            ((0..<20).map { packet(ssrc: 0xbad, sequence: $0, payloadBytes: 768) }, 20),
            ((0..<200).map { packet(ssrc: 0xbad, sequence: 20 + $0, payloadBytes: 65000 - 12) }, 8),
            ((0..<50).map { packet(type: 96, ssrc: 0xbad, sequence: 220 + $0, payloadBytes: 768) }, 50),
            ((0..<50).map { packet(ssrc: 0xbad, sequence: 270 + $0, payloadBytes: 767) }, 50),
        ]
        let sent = phases.reduce(0) { $0 + $1.datagrams.count }
        let sending = TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2 },
              "nodes": [ { "id": "sine", "type": "stream", "url": "\(source)" },
                         { "id": "net", "type": "output", "rtp": "rtp://127.0.0.1:\(port)?format=L16&ptime=4" } ],
              "links": [ { "from": "sine", "to": "net" } ] }
            """, name: "rtp-attack-send")
        let receiving = TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2 },
              "nodes": [ { "id": "net", "type": "stream", "url": "rtp://127.0.0.1:\(port)?clock=shared&ptime=4", \
            "bufferSeconds": 0.08 },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "net", "to": "out" } ] }
            """, name: "rtp-attack-receive")
        let record = TestSupport.directory.appendingPathComponent("rtp-attack-record.wav").path
        let socket = TestSupport.directory.appendingPathComponent("rtp-attack-\(getpid())/r.sock").path
        // Both run until the test has seen what it waits for (the receiver is stopped then).
        let receiver = try pw.graphhost([
            "run", receiving, "--duration", "300", "--latency", "256", "--record", record, "--socket", socket,
        ])
        defer { receiver.interrupt() }
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        let sender = try pw.graphhost([
            "run", sending, "--duration", "300", "--latency", "256", "--name", "rtp-attack-send",
        ])
        defer { sender.interrupt() }

        func stream() throws -> [String: Any] {
            try XCTUnwrap((try control.status()["streams"] as? [[String: Any]])?.first, "no stream in the status")
        }
        func rtp() throws -> [String: Any] {
            let entry = try stream()
            return try XCTUnwrap(entry["rtp"] as? [String: Any], "no rtp entry in \(entry)")
        }
        /// Datagrams the receiver counted as not the session's: malformed, and dropped by each reason.
        func counted() throws -> (total: Int, byReason: [String: Int]) {
            let now = try rtp()
            var byReason = ["malformed": now["malformed"] as? Int ?? 0]
            for (reason, count) in now["dropped"] as? [String: Any] ?? [:] { byReason[reason] = count as? Int ?? 0 }
            return (byReason.values.reduce(0, +), byReason)
        }
        // 80 ms asked for, give or take where the buffer settled (5 ms and a packet) and a quantum.
        let tolerance = 5 + 4 + 256.0 / 48
        func latencyAtTarget() throws -> Bool {
            abs((try rtp()["latencyMs"] as? Double ?? .infinity) - 80) <= tolerance
        }
        // The sine plays and the buffer has settled (two seconds after the start).
        XCTAssertTrue(try TestSupport.waitUntil(timeout: 30) { (try rtp()["received"] as? Int ?? 0) > 250 })
        let playing = try control.position()
        XCTAssertTrue(try control.waitForPosition(playing + 3))
        let before = try rtp()
        XCTAssertTrue(try latencyAtTarget(), "before the attack: \(before)")
        let attackStart = try control.position()

        let attacker = try UDPAttacker(port: port)
        for phase in phases {
            for start in stride(from: 0, to: phase.datagrams.count, by: phase.batch) {
                // Sent once the receiver's socket has room: the kernel drops none of them.
                XCTAssertTrue(TestSupport.waitUntil { UDPAttacker.queuedBytes(port: port) < 256 * 1024 })
                for datagram in phase.datagrams[start..<min(start + phase.batch, phase.datagrams.count)] {
                    attacker.send(datagram)
                }
            }
        }

        // Every datagram is counted once, by its reason (less any the kernel dropped for want of room: none, paced).
        var last = (total: 0, byReason: [String: Int]())
        XCTAssertTrue(
            try TestSupport.waitUntil(timeout: 20) {
                last = try counted()
                return last.total >= sent - UDPAttacker.kernelDrops(port: port)
            }, "counted \(last) of \(sent) datagrams")
        let attackEnd = try control.position()
        XCTAssertLessThanOrEqual(last.total, sent, "\(last)")
        let reasons = last.byReason
        XCTAssertGreaterThanOrEqual(reasons["foreignSender"] ?? 0, 20, "\(reasons)")
        XCTAssertGreaterThanOrEqual(reasons["oversized"] ?? 0, 200, "\(reasons)")
        XCTAssertGreaterThanOrEqual(reasons["payloadType"] ?? 0, 50, "\(reasons)")
        XCTAssertGreaterThanOrEqual(reasons["partialFrames"] ?? 0, 50, "\(reasons)")
        XCTAssertGreaterThan(reasons["malformed"] ?? 0, 500, "\(reasons)")
        XCTAssertEqual(try rtp()["takeovers"] as? Int, 0)

        // The receive latency is back at its target within two seconds of played audio after the attack.
        var back = -1.0
        XCTAssertTrue(
            try TestSupport.waitUntil(timeout: 20) {
                back = try control.position()
                return try latencyAtTarget()
            }, "the latency stayed at \((try? rtp())?["latencyMs"] ?? "?") ms")
        XCTAssertLessThanOrEqual(back - attackEnd, 2, "the latency came back \(back - attackEnd) s after the attack")
        // A second more, so the recording studied below holds all of the attack.
        XCTAssertTrue(try control.waitForPosition(attackEnd + 1))

        let final = try stream()
        let counts = try XCTUnwrap(final["rtp"] as? [String: Any])
        receiver.interrupt()
        let result = receiver.wait(timeout: 60)
        XCTAssertEqual(result.status, 0, result.err)
        sender.interrupt()
        _ = sender.wait(timeout: 60)

        // The recording from half a second before the attack to its last half second (the run fades out as it stops):
        // the sine, or where a packet was lost (the kernel had no room for it) its concealment, and nothing else.
        let recorded = try LoudnessReference.samples(record)
        let sourcePeak = TestSupport.peak(try LoudnessReference.samples(source))
        let from = max(0, Int((attackStart - 0.5) * 48000)) * 2
        let to = recorded.count - 48000
        XCTAssertGreaterThan(to - from, Int((attackEnd - attackStart) * 96000), "the recording is too short")
        let studied = Array(recorded[from..<to])
        let loudest = TestSupport.peak(studied)
        XCTAssertLessThanOrEqual(loudest, sourcePeak + 1e-4, "louder than the sine (\(sourcePeak))")
        let blocks = SineBlocks(studied, frequency: 1000, rate: 48000)
        let xruns = (result.out.firstMatch(of: /xruns ([0-9]+)/)?.output.1).flatMap { Int($0) } ?? 0
        let events = (counts["lost"] as? Int ?? 0) + (counts["resyncs"] as? Int ?? 0) + xruns
        let rebuffers = final["underruns"] as? Int ?? 0
        // A concealed loss, a resync or a missed cycle touches at most three 10 ms blocks; a rebuffer's fade-out and
        // fade-in (a quarter of the buffer each) six, and its silence (the buffer, 80 ms) nine more.
        let allowance = 3 * events + 6 * rebuffers
        XCTAssertLessThanOrEqual(blocks.noisy, allowance, "blocks with more than the sine: \(blocks.worst)")
        XCTAssertGreaterThanOrEqual(
            blocks.whole, blocks.count - allowance - 9 * rebuffers, "blocks of the sine at its level")
        print(
            "rtp attack: \(sent) datagrams, counted \(reasons); latency back \(back - attackEnd) s after; "
                + "\(blocks.count) blocks, \(blocks.whole) whole, \(blocks.noisy) noisy (worst residual "
                + "\(blocks.worst), allowed \(allowance)), peak \(loudest) of \(sourcePeak); lost "
                + "\(counts["lost"] ?? 0), resyncs \(counts["resyncs"] ?? 0); "
                + result.out.split(separator: "\n").joined(separator: "; "))
    }

    /// A unicast session's port is graphhost's alone: another socket cannot bind it, with or without SO_REUSEADDR, at
    /// the session's address or at every address.
    func testNoOtherSocketCanBindTheUnicastPortWhileGraphhostListens() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let port = try UDPRelay.freePort()
        let receiving = TestSupport.graph(
            """
            { "format": { "sampleRate": 48000, "channels": 2 },
              "nodes": [ { "id": "net", "type": "stream", "url": "rtp://127.0.0.1:\(port)" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "net", "to": "out" } ] }
            """, name: "rtp-exclusive")
        let socket = TestSupport.directory.appendingPathComponent("rtp-exclusive-\(getpid())/r.sock").path
        let receiver = try pw.graphhost(["run", receiving, "--duration", "30", "--socket", socket])
        defer { receiver.interrupt() }
        let control = pw.control(socket)
        XCTAssertTrue(control.waitForSocket())
        // Listening: the stream is in the status and its socket in the kernel's table.
        XCTAssertTrue(
            try TestSupport.waitUntil {
                ((try control.status()["streams"] as? [[String: Any]])?.first?["rtp"]) != nil
                    && UDPAttacker.isBound(port: port)
            })
        for address in ["127.0.0.1", "0.0.0.0"] {
            for reuse in [false, true] {
                XCTAssertEqual(
                    UDPAttacker.bindError(address: address, port: port, reuseAddress: reuse), EADDRINUSE,
                    "\(address):\(port), SO_REUSEADDR \(reuse)")
            }
        }
        receiver.interrupt()
        let result = receiver.wait(timeout: 60)
        XCTAssertFalse(result.err.contains("cannot listen"), result.err)
        // Once it stopped, the port is free.
        XCTAssertEqual(UDPAttacker.bindError(address: "127.0.0.1", port: port, reuseAddress: false), 0)
    }
}

/// The receiver's decoder fed crafted packets on 127.0.0.1: it locks to the first sender (address, port, SSRC); another
/// SSRC or source port, another payload type, partial frames and packets longer than the session's are dropped and
/// counted by reason; another sender takes over only after the first has been silent for a second, fading in; an
/// announced session takes packets only from the announcement's address.
final class RTPSenderLockTests: XCTestCase {
    func testTheSessionIsLockedToItsSenderAndTakenOverAfterASilence() throws {
        let port = try UDPRelay.freePort()
        let source = try RTPPacketSource(
            session: RTPSession(url: "rtp://127.0.0.1:\(port)?ptime=4"), url: "rtp lock test")
        let decoder = RTPDecoder(source: source)
        let first = try UDPAttacker(port: port)
        let second = try UDPAttacker(port: port)
        /// Sends one packet from `attacker` and returns what the decoder emits for it: (frames, first, last sample).
        func play(
            _ attacker: UDPAttacker, _ sequence: UInt16, ssrc: UInt32 = 0x1234, type: UInt8 = 127, frames: Int = 192,
            extraBytes: Int = 0
        ) throws -> [(Int, Float, Float)] {
            var bytes = RTPDecoderTests.packet(
                sequence: sequence, timestamp: UInt32(sequence) * 192, frames: frames, value: 16384)
            bytes[1] = type
            for (i, shift) in [24, 16, 8, 0].enumerated() { bytes[8 + i] = UInt8(truncatingIfNeeded: ssrc >> shift) }
            bytes += [UInt8](repeating: 0, count: extraBytes)
            attacker.send(bytes)
            var blocks: [(Int, Float, Float)] = []
            XCTAssertTrue(
                try decoder.decodeNext { samples, frames, _, _ in
                    blocks.append((frames, samples[0], samples[2 * frames - 1]))
                })
            return blocks
        }
        XCTAssertEqual(try play(first, 1).map(\.0), [192])
        XCTAssertEqual(try play(first, 2).map(\.0), [192])
        // Not the sender: another SSRC from its address, its SSRC from another port.
        XCTAssertEqual(try play(first, 3, ssrc: 0xbad).count, 0)
        XCTAssertEqual(try play(second, 3).count, 0)
        // Not the session's packets: another payload type, a partial frame, longer than ptime allows (4 ms and one
        // more: 240 frames).
        XCTAssertEqual(try play(first, 3, type: 96).count, 0)
        XCTAssertEqual(try play(first, 3, extraBytes: 2).count, 0)
        XCTAssertEqual(try play(first, 3, frames: 241).count, 0)
        XCTAssertEqual(try play(first, 3, frames: 240).map(\.0), [240])
        var counts = source.counters.snapshot
        XCTAssertEqual(
            counts.dropped,
            RTPReceiveCounters.Dropped(foreignSender: 2, payloadType: 1, partialFrames: 1, oversized: 1))
        XCTAssertEqual([counts.received, counts.lost, counts.malformed, counts.takeovers], [3, 0, 0, 0])

        // The first sender falls silent: the second takes over once it has been for a second, fading in.
        var taken: [(Int, Float, Float)] = []
        var sequence: UInt16 = 500
        XCTAssertTrue(
            try TestSupport.waitUntil(timeout: 30) {
                sequence += 1
                taken = try play(second, sequence, ssrc: 0x5678)
                return !taken.isEmpty
            })
        XCTAssertEqual(taken.map(\.0), [192])
        XCTAssertLessThan(taken[0].1, 0.05, "no fade-in after the takeover")
        XCTAssertEqual(taken[0].2, 0.5)
        counts = source.counters.snapshot
        XCTAssertEqual(counts.takeovers, 1)
        XCTAssertEqual(counts.dropped.foreignSender, 2 + Int(sequence - 501))
        XCTAssertEqual(counts.lost, 0)
        // Now the first is the stranger.
        XCTAssertEqual(try play(first, 4).count, 0)
        XCTAssertEqual(try play(second, sequence + 1, ssrc: 0x5678).first?.1, 0.5)
        XCTAssertEqual(source.counters.snapshot.dropped.foreignSender, 3 + Int(sequence - 501))
    }

    func testWithoutPtimeAPacketMayCarryTwentyMilliseconds() throws {
        let port = try UDPRelay.freePort()
        let source = try RTPPacketSource(session: RTPSession(url: "rtp://127.0.0.1:\(port)"), url: "rtp size test")
        let decoder = RTPDecoder(source: source)
        let sender = try UDPAttacker(port: port)
        var emitted: [Int] = []
        for (sequence, frames) in [(1, 960), (2, 961), (3, 16247)] {
            sender.send(
                RTPDecoderTests.packet(
                    sequence: UInt16(sequence), timestamp: UInt32(sequence * 960), frames: frames, value: 100))
            XCTAssertTrue(try decoder.decodeNext { _, frames, _, _ in emitted.append(frames) })
        }
        XCTAssertEqual(emitted, [960])
        XCTAssertEqual(source.counters.snapshot.dropped.oversized, 2)
    }

    /// An announced session (announced from 127.0.0.1) takes no packet from 127.0.0.2, even as its first.
    func testAnAnnouncedSessionTakesPacketsOnlyFromTheAnnouncer() throws {
        let sapPort = try UDPRelay.freePort()
        let port = try UDPRelay.freePort()
        let source = try RTPPacketSource(
            discovering: SAPQuery(url: "sap://127.0.0.1:\(sapPort)?session=Studio"), url: "sap lock test")
        nonisolated(unsafe) let decoder = RTPDecoder(source: source)
        let played = Mutex<[Float]>([])
        let finished = Atomic<Bool>(false)
        let thread = Thread {
            while (try? decoder.decodeNext { samples, _, _, _ in played.withLock { $0.append(samples[0]) } }) == true {}
            finished.store(true, ordering: .releasing)
        }
        thread.start()
        defer { source.cancel() }
        let announcer = try UDPAttacker(port: sapPort)
        announcer.send(SAPDiscoveryTests.announcement(name: "Studio", port: port))
        XCTAssertTrue(try TestSupport.waitUntil { source.session?.port == port })
        func packet(_ sequence: UInt16, _ value: Int16) -> [UInt8] {
            RTPDecoderTests.packet(sequence: sequence, timestamp: UInt32(sequence) * 192, frames: 192, value: value)
        }
        let stranger = try UDPAttacker(port: port, from: "127.0.0.2")
        stranger.send(packet(1, 8192))
        XCTAssertTrue(TestSupport.waitUntil { source.counters.snapshot.dropped.foreignSender == 1 })
        let sender = try UDPAttacker(port: port)
        sender.send(packet(2, 16384))
        XCTAssertTrue(TestSupport.waitUntil { played.withLock { $0 } == [0.5] })
        stranger.send(packet(3, 8192))
        XCTAssertTrue(TestSupport.waitUntil { source.counters.snapshot.dropped.foreignSender == 2 })
        sender.send(packet(3, 4096))
        XCTAssertTrue(TestSupport.waitUntil { played.withLock { $0 } == [0.5, 0.125] })
        source.cancel()
        XCTAssertTrue(TestSupport.waitUntil { finished.load(ordering: .acquiring) })
    }
}

/// A UDP socket of the test's on 127.0.0.1 (or `from`) sending datagrams to `port` there; and what the kernel's table
/// (/proc/net/udp) says of the socket bound to a port.
final class UDPAttacker {
    private let fd: Int32
    private var destination = sockaddr_in()

    init(port: Int, from: String = "127.0.0.1") throws {
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, from, &local.sin_addr)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard fd >= 0, bound == 0 else {
            throw TestSupport.ToolFailure(description: "cannot bind a socket at \(from): \(errno)")
        }
        var size: Int32 = 1 << 20
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        destination.sin_family = sa_family_t(AF_INET)
        destination.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &destination.sin_addr)
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8]) {
        let sent = bytes.withUnsafeBytes { b in
            withUnsafePointer(to: &destination) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, b.baseAddress, b.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        XCTAssertEqual(sent, bytes.count, "sendto: errno \(errno)")
    }

    /// The errno of binding a UDP socket at `address`:`port` (0: it bound).
    static func bindError(address: String, port: Int, reuseAddress: Bool) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var yes: Int32 = 1
        if reuseAddress { setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size)) }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, address, &local.sin_addr)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return bound == 0 ? 0 : errno
    }

    /// The lines of /proc/net/udp of sockets bound to `port`: their fields.
    private static func table(port: Int) -> [[Substring]] {
        let text = (try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8)) ?? ""
        let suffix = ":" + String(format: "%04X", port)
        return text.split(separator: "\n").dropFirst().map { $0.split(separator: " ") }
            .filter { $0.count > 12 && $0[1].hasSuffix(suffix) }
    }

    static func isBound(port: Int) -> Bool { !table(port: port).isEmpty }

    /// Bytes waiting in the receive queues of the sockets bound to `port`.
    static func queuedBytes(port: Int) -> Int {
        table(port: port).reduce(0) { $0 + (Int($1[4].split(separator: ":").last ?? "", radix: 16) ?? 0) }
    }

    /// Datagrams the kernel dropped for want of room in the receive queues of the sockets bound to `port`.
    static func kernelDrops(port: Int) -> Int { table(port: port).reduce(0) { $0 + (Int($1.last ?? "") ?? 0) } }
}

/// Interleaved stereo cut into 10 ms blocks, each fitted with a sine of `frequency` (a whole number of periods a block)
/// per channel: blocks whose residual after the fit is beyond the sine's 16-bit rounding (noisy), and blocks that are
/// the sine at its full level (whole: the fit's amplitude within 1 % of the loudest block's, the residual small).
struct SineBlocks {
    var count = 0
    var noisy = 0
    var whole = 0
    /// The largest residual (RMS) of a block.
    var worst: Float = 0

    init(_ samples: [Float], frequency: Double, rate: Int) {
        let frames = rate / 100
        let sine = (0..<frames).map { Float(sin(2 * Double.pi * frequency * Double($0) / Double(rate))) }
        let cosine = (0..<frames).map { Float(cos(2 * Double.pi * frequency * Double($0) / Double(rate))) }
        var amplitudes: [Float] = []
        for start in stride(from: 0, through: samples.count - 2 * frames, by: 2 * frames) {
            var residual: Float = 0
            var amplitude: Float = .infinity
            for channel in 0..<2 {
                var a: Float = 0
                var b: Float = 0
                for i in 0..<frames {
                    a += samples[start + 2 * i + channel] * sine[i]
                    b += samples[start + 2 * i + channel] * cosine[i]
                }
                a *= 2 / Float(frames)
                b *= 2 / Float(frames)
                var sum: Float = 0
                for i in 0..<frames {
                    let e = samples[start + 2 * i + channel] - a * sine[i] - b * cosine[i]
                    sum += e * e
                }
                residual = max(residual, (sum / Float(frames)).squareRoot())
                amplitude = min(amplitude, (a * a + b * b).squareRoot())
            }
            count += 1
            worst = max(worst, residual)
            if residual > 1e-3 { noisy += 1 }
            amplitudes.append(residual <= 1e-3 ? amplitude : 0)
        }
        let level = amplitudes.max() ?? 0
        whole = amplitudes.filter { abs($0 - level) <= 0.01 * level }.count
    }
}
