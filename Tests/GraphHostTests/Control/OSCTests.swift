import Foundation
import XCTest

@testable import GraphHost

/// OSC control (`run --osc-port`) against a private PipeWire daemon, driven by liblo's `oscsend` and watched by its
/// `oscdump`, judged on the `--record` output; and the OSC server's requests, subscriptions and errors without a
/// daemon, over real UDP on 127.0.0.1.
final class OSCTests: XCTestCase {
    /// A free UDP port on 127.0.0.1 (the kernel's choice, released again).
    static func freePort() throws -> Int {
        let socket = try BoundUDPSocket()
        defer { close(socket.fd) }
        return socket.port
    }

    /// A UDP socket bound to 127.0.0.1 at a port the kernel chose.
    struct BoundUDPSocket {
        let fd: Int32
        let port: Int
        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            self.fd = fd
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
                }
            }
            guard bound else {
                throw TestSupport.ToolFailure(
                    description: "cannot bind a UDP socket: \(String(cString: strerror(errno)))")
            }
            port = Int(UInt16(bigEndian: address.sin_port))
        }
        /// Sends `message` to 127.0.0.1:`port`.
        func send(_ message: OSCMessage, to port: Int) { send(message.encoded(), to: port) }
        /// Sends raw bytes to 127.0.0.1:`port`.
        func send(_ bytes: [UInt8], to port: Int) {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            _ = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { to in
                    bytes.withUnsafeBytes {
                        sendto(fd, $0.baseAddress, $0.count, 0, to, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
        }
        /// The next message that arrives within `timeout` seconds.
        func receive(timeout: TimeInterval = 30) throws -> OSCMessage? {
            var request = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&request, 1, Int32(timeout * 1000)) > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let n = recv(fd, &buffer, buffer.count, 0)
            return n > 0 ? try OSCMessage(datagram: Array(buffer[0..<n])) : nil
        }
    }

    /// The local addresses bound to UDP `port` in /proc/net/udp and udp6 (hex, as the kernel writes them).
    static func boundAddresses(port: Int) -> [String] {
        let suffix = String(format: ":%04X", port)
        return ["/proc/net/udp", "/proc/net/udp6"].flatMap { file -> [String] in
            let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").dropFirst().compactMap { line in
                let local =
                    line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.map(String.init) ?? ""
                return local.hasSuffix(suffix) ? local : nil
            }
        }
    }

    /// A 1 kHz sine at -6 dBFS through a mixer and a chain node: `a` and `b` hold an EQ with presets that differ
    /// at 1 kHz by about 3 dB.
    func sineGraph() throws -> String {
        TestSupport.graph(
            """
            { "chains": { "a": [ { "id": "eq", "type": "ipod-eq", "preset": "Bass Booster" } ],
                          "b": [ { "id": "eq", "type": "ipod-eq", "preset": "Vocal Booster" } ] },
              "nodes": [ { "id": "song", "type": "stream", "url": "\(try TestSupport.sine(seconds: 60))" }, \
            { "id": "mix", "type": "mixer", "inputs": 1 },
                         { "id": "fx", "type": "chain", "chain": "a" }, { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "mix" }, { "from": "mix", "to": "fx" }, \
            { "from": "fx", "to": "out" } ] }
            """, name: "osc-sine")
    }

    /// Level in dB (RMS of both channels) of the recording between `from` and `to` seconds.
    static func level(_ samples: [Float], from: Double, to: Double) -> Double {
        let range = (Int(from * 48000) * 2)..<min(samples.count, Int(to * 48000) * 2)
        var sum = 0.0
        for i in range { sum += Double(samples[i]) * Double(samples[i]) }
        return 10 * log10(sum / Double(max(range.count, 1)))
    }

    /// `oscsend 127.0.0.1 PORT ADDRESS TYPES VALUES...`; fails the test when oscsend does.
    func oscsend(_ port: Int, _ address: String, _ types: String = "", _ values: String...) throws {
        let r = try TestSupport.execute(
            URL(fileURLWithPath: "/usr/bin/oscsend"),
            ["127.0.0.1", "\(port)", address] + (types.isEmpty ? [] : [types]) + values)
        XCTAssertEqual(r.status, 0, String(decoding: r.err, as: UTF8.self))
    }

    /// `run --osc-port 0 --record`: oscsend's set, preset (by index) and chain change the recorded sound as the same
    /// socket commands do; an oscdump on another port, subscribed by port, receives the events, the replies and
    /// the status; bad messages get error replies and change nothing; the port is bound to 127.0.0.1 only.
    func testOSCControlsAPlayingGraph() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let path = try sineGraph()
        let socket = TestSupport.directory.appendingPathComponent("osc/sine.sock").path
        let recording = TestSupport.directory.appendingPathComponent("osc-record.wav").path
        let control = pw.control(socket)
        let run = try pw.graphhost([
            "run", path, "--socket", socket, "--latency", "256", "--record", recording, "--osc-port", "0",
        ])
        XCTAssertTrue(run.waitForError(containing: "OSC: listening on udp 127.0.0.1:"), run.errorText)
        let port = try XCTUnwrap(
            run.errorText.firstMatch(of: /listening on udp 127\.0\.0\.1:(\d+)/).flatMap { Int($0.1) }, run.errorText)
        XCTAssertEqual(
            Self.boundAddresses(port: port), ["0100007F" + String(format: ":%04X", port)], "bound only to 127.0.0.1")

        let dump = try OSCDump(environment: pw.environment)
        defer { dump.stop() }
        let dumpPort = dump.port
        var dumped: String { dump.text }
        try oscsend(port, "/graphhost/subscribe", "i", "\(dumpPort)")
        XCTAssertTrue(TestSupport.waitUntil { dumped.contains("\"subscribed\":\"127.0.0.1:\(dumpPort)\"") }, dumped)

        let list = try JSONSerialization.jsonObject(with: Data(try control.ctl(["list"]).out.utf8)) as? [String: Any]
        let eq = try XCTUnwrap(
            (list?["nodes"] as? [[String: Any]])?.first { $0["id"] as? String == "fx/eq" },
            "\(String(describing: list))")
        let vocal = try XCTUnwrap((eq["presets"] as? [String])?.firstIndex(of: "Vocal Booster"))

        /// Each step changes the graph, waits until the change is carried out (the event reached oscdump), and holds
        /// it for a second of audio; `segments` are the positions each state was heard between.
        var segments: [(from: Double, to: Double)] = []
        var from = 0.5
        func step(_ event: String, _ change: () throws -> Void) throws {
            let before = try control.position()
            let seen = dumped.components(separatedBy: event).count
            segments.append((from, before))
            try change()
            XCTAssertTrue(
                TestSupport.waitUntil { dumped.components(separatedBy: event).count > seen },
                "no new \(event) in: \(dumped)")
            from = try control.position() + 0.3
            XCTAssertTrue(try control.waitForPosition(from + 0.8))
        }
        XCTAssertTrue(try control.waitForPosition(1.5))
        try step("\"command\":\"set mix volume 0.25\"") {
            try oscsend(port, "/graphhost/set", "ssf", "mix", "volume", "0.25")
        }
        try step("\"command\":\"preset fx/eq \(vocal)\"") {
            try oscsend(port, "/graphhost/preset", "si", "fx/eq", "\(vocal)")
        }
        try step("\"command\":\"preset fx/eq Bass Booster\"") {
            XCTAssertEqual(try control.ctl(["preset", "fx/eq", "Bass", "Booster"]).status, 0)
        }
        try step("\"command\":\"preset fx/eq Vocal Booster\"") {
            XCTAssertEqual(try control.ctl(["preset", "fx/eq", "Vocal", "Booster"]).status, 0)
        }
        try step("\"command\":\"chain fx b\"") { try oscsend(port, "/graphhost/chain", "ss", "fx", "b") }
        try step("\"command\":\"chain fx a\"") { XCTAssertEqual(try control.ctl(["chain", "fx", "a"]).status, 0) }
        try step("\"command\":\"chain fx b\"") { XCTAssertEqual(try control.ctl(["chain", "fx", "b"]).status, 0) }
        // Bad messages: a missing value, a wrong type, a label the mixer does not take, an unknown address.
        try step("unknown OSC address '/graphhost/volume'") {
            try oscsend(port, "/graphhost/set", "ss", "mix", "volume")
            try oscsend(port, "/graphhost/chain", "si", "fx", "1")
            try oscsend(port, "/graphhost/set", "sss", "mix", "volume", "loud")
            try oscsend(port, "/graphhost/volume", "f", "0.5")
        }
        try oscsend(port, "/graphhost/status")
        XCTAssertTrue(TestSupport.waitUntil { dumped.contains("\"/graphhost/status\" \"{") }, dumped)
        segments.append((from, try control.position()))
        XCTAssertEqual(try control.ctl(["quit"]).status, 0)
        let result = run.wait()
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("dropped frames 0"), result.out)

        let lines = dumped.split(separator: "\n")
        for expected in [
            "/graphhost/set expects NODE PARAM VALUE",
            "/graphhost/chain expects NODE NAME [MODE]: type tags ss or sss (MODE: crossfade or spillover); "
                + "got type tags 'si'",
            "'loud' is not a number", "\"playing\":true",
        ] {
            XCTAssertTrue(
                lines.contains { $0.contains(" /graphhost/reply ss ") && $0.contains(expected) },
                "no reply with \(expected) in: \(dumped)")
        }
        XCTAssertEqual(lines.filter { $0.contains("\"ok\":false") }.count, 4, dumped)
        XCTAssertFalse(dumped.contains("\"command\":\"chain fx 1\""), dumped)

        let samples = try SoundFile(path: recording).samples
        let levels = segments.map { Self.level(samples, from: $0.from, to: $0.to) }
        print("OSC levels (dB): \(levels.map { String(format: "%.2f", $0) }) over \(segments)")
        XCTAssertEqual(levels.count, 9)
        XCTAssertEqual(levels[1] - levels[0], 20 * log10(0.25), accuracy: 0.1, "set mix volume 0.25")
        XCTAssertGreaterThan(levels[2] - levels[1], 2, "preset Vocal Booster by index")
        XCTAssertEqual(levels[3], levels[1], accuracy: 0.05, "preset Bass Booster through the socket")
        XCTAssertEqual(levels[4], levels[2], accuracy: 0.05, "the socket's preset Vocal Booster sounds as OSC's did")
        XCTAssertEqual(levels[6], levels[1], accuracy: 0.05, "chain a through the socket")
        XCTAssertEqual(levels[7], levels[5], accuracy: 0.05, "the socket's chain b sounds as OSC's did")
        XCTAssertGreaterThan(levels[5] - levels[6], 2, "chain b is louder at 1 kHz than chain a")
        XCTAssertEqual(levels[8], levels[7], accuracy: 0.05, "bad messages changed nothing")
    }

    /// `/graphhost/meters RATE` sends every subscriber the meters' levels as `/graphhost/meter s f f i …` (node, then
    /// each channel's peak and RMS in dBFS and its clips), RATE times a second, until `/graphhost/meters 0`.
    func testMetersAreSentToSubscribersAtTheAskedRate() throws {
        let pw = try HeadlessPipeWire(quantum: 256)
        defer { pw.stop() }
        let socket = TestSupport.directory.appendingPathComponent("osc/meters.sock").path
        let run = try pw.graphhost(["run", try LiveFeedTests.sineGraph(), "--socket", socket, "--osc-port", "0"])
        XCTAssertTrue(run.waitForError(containing: "OSC: listening on udp 127.0.0.1:"), run.errorText)
        let port = try XCTUnwrap(
            run.errorText.firstMatch(of: /listening on udp 127\.0\.0\.1:(\d+)/).flatMap { Int($0.1) }, run.errorText)
        let dump = try OSCDump(environment: pw.environment)
        defer { dump.stop() }
        let dumpPort = dump.port
        var dumped: String { dump.text }
        try oscsend(port, "/graphhost/subscribe", "i", "\(dumpPort)")
        try oscsend(port, "/graphhost/meters", "i", "20")
        XCTAssertTrue(TestSupport.waitUntil { dumped.contains(#""meters":20,"ok":true"#) }, dumped)
        /// The `/graphhost/meter` lines oscdump printed for node `out`: their arguments.
        func meters() -> [[String]] {
            dumped.split(separator: "\n").filter { $0.contains(" /graphhost/meter sffiffi \"out\" ") }.map {
                $0.split(separator: " ").dropFirst(4).map(String.init)
            }
        }
        XCTAssertTrue(TestSupport.waitUntil { meters().count >= 40 }, dumped)
        let last = try XCTUnwrap(meters().last)
        XCTAssertEqual(last.count, 6, "\(last)")
        for channel in [0, 3] {
            XCTAssertEqual(try XCTUnwrap(Double(last[channel])), -6.02, accuracy: 0.05, "\(last)")
            XCTAssertEqual(try XCTUnwrap(Double(last[channel + 1])), -9.03, accuracy: 0.05, "\(last)")
            XCTAssertEqual(last[channel + 2], "0")
        }
        try oscsend(port, "/graphhost/meters", "i", "0")
        XCTAssertTrue(TestSupport.waitUntil { dumped.contains(#""meters":0,"ok":true"#) }, dumped)
        let stopped = meters().count
        try oscsend(port, "/graphhost/meters", "i", "100")
        XCTAssertTrue(TestSupport.waitUntil { dumped.contains("RATE 100 is not 0 or 1…60") }, dumped)
        XCTAssertLessThanOrEqual(meters().count, stopped + 1, "meters went on after /graphhost/meters 0")
        XCTAssertEqual(try pw.control(socket).ctl(["quit"]).status, 0)
        XCTAssertEqual(run.wait().status, 0)
    }

    /// A port another program holds: `run --osc-port` says so and exits non-zero.
    func testATakenOSCPortFailsClearly() throws {
        let pw = try HeadlessPipeWire()
        defer { pw.stop() }
        let holder = try BoundUDPSocket()
        defer { close(holder.fd) }
        let socket = TestSupport.directory.appendingPathComponent("osc/taken.sock").path
        let run = try pw.graphhost([
            "run", try sineGraph(), "--socket", socket, "--osc-port", "\(holder.port)", "--duration", "30",
        ])
        let result = run.wait()
        XCTAssertEqual(result.status, 1, result.err)
        XCTAssertTrue(
            result.err.contains("cannot listen for OSC on 127.0.0.1:\(holder.port): Address already in use"), result.err
        )
    }

    /// The server without a daemon: replies go to the sender, subscriptions by port or URL reach another socket,
    /// events follow, the number of subscribers is bounded, a subscription cannot name another host.
    func testSubscriptionsRepliesAndLimits() throws {
        let path = TestSupport.graph(try TestSupport.eqGraph(preset: "Rock"))
        let session = try TestSupport.session(path)
        let status = TestSupport.offlineStatus()
        let control = LiveControl(session: session, status: { status.snapshot($0) }, quit: {})
        let server = OSCServer(port: 0)
        try server.start(control: control)
        defer { server.stop() }
        let port = try XCTUnwrap(server.endpoint?.port)
        let client = try BoundUDPSocket()
        let listener = try BoundUDPSocket()
        defer {
            close(client.fd)
            close(listener.fd)
        }

        func reply(_ message: OSCMessage) throws -> [String: Any] {
            client.send(message, to: port)
            let answer = try XCTUnwrap(try client.receive(), "no reply to \(message)")
            XCTAssertEqual(answer.address, "/graphhost/reply")
            XCTAssertEqual(answer.arguments.first, .string(message.address))
            guard case .string(let json) = answer.arguments.last else {
                throw TestSupport.ToolFailure(description: "\(answer)")
            }
            return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        }
        XCTAssertEqual(try reply(OSCMessage(address: "/graphhost/status"))["ok"] as? Bool, true)
        XCTAssertEqual(
            try reply(
                OSCMessage(
                    address: "/graphhost/subscribe", arguments: [.string("osc.udp://127.0.0.1:\(listener.port)")]))[
                    "subscribed"] as? String,
            "127.0.0.1:\(listener.port)")
        XCTAssertEqual(try listener.receive()?.address, "/graphhost/reply", "a subscriber sees replies to others")
        XCTAssertEqual(
            try reply(
                OSCMessage(address: "/graphhost/set", arguments: [.string("eq"), .string("preamp"), .double(-3)]))[
                    "command"] as? String,
            "set eq preamp -3")
        let event = try XCTUnwrap(try listener.receive())
        XCTAssertEqual(
            event,
            OSCMessage(
                address: "/graphhost/event", arguments: [.string(#"{"command":"set eq preamp -3","event":"command"}"#)])
        )
        XCTAssertEqual(try listener.receive()?.address, "/graphhost/reply")

        let other = try reply(
            OSCMessage(address: "/graphhost/subscribe", arguments: [.string("osc.udp://10.1.2.3:9000")]))
        XCTAssertEqual(
            other["error"] as? String, "a subscription may name only the sender's own host (127.0.0.1), not 10.1.2.3")
        // Subscribers are sockets of this test, so nothing is sent to another program's port.
        let others = try (0..<OSCServer.maxSubscribers).map { _ in try BoundUDPSocket() }
        defer { others.forEach { close($0.fd) } }
        for other in others.dropLast() {
            XCTAssertEqual(
                try reply(OSCMessage(address: "/graphhost/subscribe", arguments: [.int(Int64(other.port))]))["ok"]
                    as? Bool, true)
        }
        let full = try reply(OSCMessage(address: "/graphhost/subscribe", arguments: [.int(Int64(others.last!.port))]))
        XCTAssertEqual(full["error"] as? String, "too many OSC subscribers (16); unsubscribe one first")
        XCTAssertEqual(
            try reply(OSCMessage(address: "/graphhost/unsubscribe", arguments: [.int(Int64(listener.port))]))["ok"]
                as? Bool, true)
        XCTAssertEqual(
            try reply(OSCMessage(address: "/graphhost/unsubscribe", arguments: [.int(Int64(listener.port))]))["error"]
                as? String,
            "127.0.0.1:\(listener.port) is not subscribed")
        XCTAssertEqual(
            try reply(OSCMessage(address: "/graphhost/subscribe", arguments: [.int(Int64(others.last!.port))]))["ok"]
                as? Bool, true)
        XCTAssertEqual(try reply(OSCMessage(address: "/graphhost/pause"))["ok"] as? Bool, true)
        // What the listener heard up to the reply to its own status: the replies while it was subscribed, nothing of
        // the pause after.
        listener.send(OSCMessage(address: "/graphhost/status"), to: port)
        var heard: [OSCMessage] = []
        while let message = try listener.receive(), heard.count < 100 {
            heard.append(message)
            if message.arguments.first == .string("/graphhost/status") { break }
        }
        XCTAssertEqual(heard.last?.arguments.first, .string("/graphhost/status"))
        XCTAssertEqual(
            heard.filter { $0.arguments.first == .string("/graphhost/subscribe") }.count, OSCServer.maxSubscribers + 1,
            "\(heard)")
        XCTAssertFalse(heard.contains { "\($0)".contains("pause") }, "\(heard)")

        client.send(OSCMessage(address: "/graphhost/preset", arguments: [.string("eq")]), to: port)
        let bad = try XCTUnwrap(try client.receive())
        XCTAssertEqual(
            bad.arguments.last,
            .string(
                #"{"error":"/graphhost/preset expects NODE NAME|INDEX: type tags ss or si; "#
                    + #"got type tags 's'","ok":false}"#
            ))
        client.send(Array("not OSC".utf8) + [0], to: port)
        guard case .string(let garbage) = try client.receive()?.arguments.last else {
            return XCTFail("no reply to a datagram that is not OSC")
        }
        XCTAssertTrue(garbage.hasPrefix(#"{"error":"not an OSC message (liblo error "#), garbage)
    }

    /// Every argument type read at its own size and value, in a datagram whose last argument ends it (a 4-byte
    /// argument there was read as the whole 8-byte lo_arg union, past the end: scripts/fuzz found it under ASan).
    func testArgumentsAreReadAtTheirOwnSizeUpToTheEndOfTheDatagram() throws {
        let arguments: [OSCArgument] = [
            .int(-7), .int(1 << 40), .double(0.125), .string("Rock"), .bool(true), .float(-2.5),
        ]
        let datagram = OSCMessage(address: "/graphhost/test", arguments: arguments).encoded()
        XCTAssertEqual(Array(datagram.suffix(4)), [0xC0, 0x20, 0, 0], "the float ends the datagram")
        XCTAssertEqual(try OSCMessage(datagram: datagram).arguments, arguments)
        let finding = try Data(
            contentsOf: FuzzRegressionTests.folder.appendingPathComponent(
                "Findings/osc-message/float-ends-the-datagram.osc"))
        XCTAssertThrowsError(try OSCRequest.parse(try OSCMessage(datagram: [UInt8](finding))))
    }

    /// The mapping from messages to typed commands and its errors.
    func testRequestsBecomeCommands() throws {
        func line(_ address: String, _ arguments: [OSCArgument]) throws -> OSCRequest {
            try OSCRequest.parse(OSCMessage(address: "/graphhost/" + address, arguments: arguments))
        }
        func node(_ id: String, _ action: NodeCommand) -> OSCRequest {
            .control(.node(NodeRequest(node: id, action: action)))
        }
        XCTAssertEqual(
            try line("set", [.string("mix"), .string("volume"), .float(0.25)]),
            node("mix", .set(parameter: .volume, value: 0.25)))
        XCTAssertEqual(
            try line("set", [.string("mix"), .string("volume"), .float(0.1)]),
            node("mix", .set(parameter: .volume, value: 0.1)))
        XCTAssertEqual(
            try line("set", [.string("mix"), .string("volume"), .int(1)]),
            node("mix", .set(parameter: .volume, value: 1)))
        XCTAssertEqual(
            try line("set", [.string("lv"), .string("mode"), .string("Low Pass")]),
            node("lv", .choose(parameter: ParameterID("mode"), label: "Low Pass")))
        XCTAssertEqual(
            try line("set", [.string("lv"), .string("enable"), .bool(true)]),
            node("lv", .choose(parameter: ParameterID("enable"), label: "on")))
        XCTAssertEqual(
            try line("preset", [.string("eq"), .string("Bass Booster")]), node("eq", .preset("Bass Booster")))
        XCTAssertEqual(try line("preset", [.string("eq"), .int(3)]), node("eq", .preset("3")))
        XCTAssertEqual(try line("bypass", [.string("eq"), .bool(false)]), node("eq", .bypass(false)))
        XCTAssertEqual(try line("bypass", [.string("eq"), .int(1)]), node("eq", .bypass(true)))
        XCTAssertEqual(try line("load", [.string("/tmp/a b.json")]), .control(.load(path: "/tmp/a b.json")))
        XCTAssertEqual(
            try line("chain", [.string("fx"), .string("b"), .string("spillover")]),
            .control(.chain(node: "fx", name: "b", swap: .spillover)))
        XCTAssertEqual(
            try line("load", [.string("/tmp/a b.json"), .string("crossfade")]),
            .control(.load(path: "/tmp/a b.json", swap: .crossfade)))
        XCTAssertEqual(try line("tempo", [.double(120.5)]), .control(.tempo(120.5)))
        XCTAssertEqual(try line("seek", [.string("song"), .float(12.5)]), node("song", .seek(12.5)))
        XCTAssertEqual(try line("play", []), .control(.play))
        XCTAssertEqual(try line("subscribe", []), .subscribe(.sender))
        XCTAssertEqual(try line("unsubscribe", [.int(9001)]), .unsubscribe(.port(9001)))
        for (address, arguments, error) in [
            (
                "set", [OSCArgument.string("mix volume"), .string("x"), .float(1)],
                "/graphhost/set: NODE 'mix volume' must be one word without spaces or control characters"
            ),
            (
                "load", [.string("a\nquit")],
                "/graphhost/load: PATH 'a\nquit' must be non-empty text without control characters"
            ),
            (
                "bypass", [.string("eq"), .int(2)],
                "/graphhost/bypass expects NODE on|off: type tags sT, sF, si (1 or 0) or ss (on or off); "
                    + "got type tags 'si'"
            ),
            (
                "load", [.string("/tmp/a.json"), .string("fade")],
                "/graphhost/load: MODE 'fade' is not crossfade or spillover"
            ),
            ("status", [.int(1)], "/graphhost/status expects no arguments; got type tags 'i'"),
            (
                "seek", [.string("song"), .string("soon")],
                "/graphhost/seek expects NODE SECONDS: type tags sf, sd or si; got type tags 'ss'"
            ),
            ("subscribe", [.int(70000)], "/graphhost/subscribe: port 70000 is not 1…65535"),
            ("tempo", [.int(1000)], "/graphhost/tempo: BPM 1000 is not 1…999"),
            ("seek", [.string("song"), .double(.infinity)], "/graphhost/seek: SECONDS inf is not a finite number"),
        ] as [(String, [OSCArgument], String)] {
            XCTAssertThrowsError(try line(address, arguments)) { XCTAssertEqual("\($0)", error) }
        }
        XCTAssertThrowsError(try OSCRequest.parse(OSCMessage(address: "/other/quit"))) {
            XCTAssertTrue("\($0)".hasPrefix("unknown OSC address '/other/quit'; addresses: /graphhost/set, "), "\($0)")
        }
        XCTAssertThrowsError(try OSCRequest.parse(OSCMessage(address: "/graphhost/quit"))) {
            XCTAssertTrue("\($0)".hasPrefix("unknown OSC address '/graphhost/quit'"), "\($0)")
        }
        let round = OSCMessage(
            address: "/graphhost/set",
            arguments: [.string("eq"), .string("preamp"), .float(-2.5), .int(1 << 40), .bool(true), .double(0.1)])
        XCTAssertEqual(try OSCMessage(datagram: round.encoded()), round)
        XCTAssertEqual(round.typeTags, "ssfhTd")
    }
}
