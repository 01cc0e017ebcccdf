import Foundation
import Synchronization
import XCTest

@testable import GraphHost

/// What a stranger can do to the page's server and the OSC port, in process over real sockets on 127.0.0.1
/// (Tests/WebAttack/stranger.py speaks HTTP and WebSocket byte by byte): read no file outside the graph's folder or
/// graphhost's own, learn no absolute path, lock no one out, hold no more than its share of connections.
final class WebStrangerTests: XCTestCase {
    /// A graph folder with a `peq` graph, a bad EQ file, and symlinks out of it; a secret file beside the folder.
    struct Folder {
        let folder: String
        let graph: String
        let secret: String
        static let marker = "SECRET-MARKER-7f3a"

        init(_ name: String) throws {
            let base = TestSupport.directory.appendingPathComponent(name)
            try? FileManager.default.removeItem(at: base)
            folder = base.appendingPathComponent("graphs").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            secret = base.appendingPathComponent("secret.txt").path
            try "\(Self.marker):x:0:0:root\nsecond line \(Self.marker)\n".write(
                toFile: secret, atomically: true, encoding: .utf8)
            let sine = try TestSupport.sine(seconds: 3)
            try FileManager.default.copyItem(atPath: sine, toPath: folder + "/sine.mp3")
            let text = try String(contentsOfFile: try PEQGraphTests.graph(#""bands": []"#, name: "\(name)-peq"))
                .replacing(sine, with: "sine.mp3")
            graph = folder + "/page.json"
            try text.write(toFile: graph, atomically: true, encoding: .utf8)
            try text.write(
                toFile: base.appendingPathComponent("elsewhere.json").path, atomically: true, encoding: .utf8)
            try "Preamp: -1 dB\n\(Self.marker) is no filter\n".write(
                toFile: folder + "/bad-eq.txt", atomically: true, encoding: .utf8)
            let links = [
                ("secret-link.json", secret), ("elsewhere-link.json", base.path + "/elsewhere.json"),
                ("page-link.json", graph), ("secret-link.txt", secret),
            ]
            for (link, target) in links {
                try FileManager.default.createSymbolicLink(atPath: folder + "/" + link, withDestinationPath: target)
            }
        }
    }

    /// A page server on a port the kernel chose, for `graph`; returns its URL, the control and the server.
    static func serve(_ graph: String) throws -> (url: String, control: LiveControl, server: WebServer) {
        let session = try TestSupport.session(graph)
        let status = TestSupport.offlineStatus()
        let control = LiveControl(session: session, status: { status.snapshot($0) }, quit: {})
        let announced = Mutex<String?>(nil)
        let server = WebServer(port: 0, announce: { line in announced.withLock { $0 = $0 ?? line } })
        try server.start(control: control)
        let url = try XCTUnwrap(server.url)
        return (url, control, server)
    }

    /// Runs stranger.py against `url` and returns the JSON it printed.
    static func stranger(_ url: String, _ arguments: [String]) throws -> Any {
        let script = TestSupport.root.appendingPathComponent("Tests/WebAttack/stranger.py").path
        let result = try TestSupport.execute(URL(fileURLWithPath: "/usr/bin/python3"), [script, url] + arguments)
        let out = String(decoding: result.out, as: UTF8.self)
        guard result.status == 0, let line = out.split(separator: "\n").last else {
            throw TestSupport.ToolFailure(
                description: "stranger.py \(arguments) failed (\(result.status)): \(out)"
                    + String(decoding: result.err, as: UTF8.self))
        }
        return try JSONSerialization.jsonObject(with: Data(line.utf8))
    }

    /// The page asks to `set` a file outside its folder (absolute, relative, through a symlink), a bad file inside it,
    /// to load a symlink to a graph elsewhere and to a system file, and sends a message with a key twice: each is
    /// refused, and no reply holds a line of the files or the folder's absolute path. The Load picker lists the
    /// symlink that stays inside and neither that leaves.
    func testThePageReadsNoFileOutsideItsFolders() throws {
        let files = try Folder("stranger-files")
        let (url, control, server) = try Self.serve(files.graph)
        defer {
            server.stop()
            control.withSession { $0.close() }
        }
        func set(_ value: String) -> String {
            JSONValue.object([
                ("op", .string("set")), ("node", .string("eq")), ("parameter", .string("file")),
                ("value", .string(value)),
            ]).compact
        }
        func load(_ name: String) -> String {
            JSONValue.object([("op", .string("load")), ("path", .string(name))]).compact
        }
        let messages = [
            set(files.secret), set("../secret.txt"), set("secret-link.txt"), set("/etc/passwd"), set("bad-eq.txt"),
            load("secret-link.json"), load("elsewhere-link.json"), load("../elsewhere.json"),
            #"{"op":"play","op":"pause"}"#,
        ]
        let list = TestSupport.directory.appendingPathComponent("stranger-messages.txt").path
        try messages.joined(separator: "\n").write(toFile: list, atomically: true, encoding: .utf8)
        let replies = try XCTUnwrap(try Self.stranger(url, ["messages", list]) as? [String])
        XCTAssertEqual(replies.count, messages.count, "\(replies)")
        let folderPrefix = FileAccess.realPath(files.folder)!
        for (message, reply) in zip(messages, replies) {
            XCTAssertTrue(reply.contains(#""ok":false"#), "\(message) was not refused: \(reply)")
            XCTAssertFalse(reply.contains(Folder.marker), "\(message) echoed the file: \(reply)")
            XCTAssertFalse(reply.contains("root:"), "\(message) echoed a system file: \(reply)")
            XCTAssertFalse(reply.contains(folderPrefix), "\(message) named the folder's path: \(reply)")
            XCTAssertFalse(reply.contains(files.folder), "\(message) named the folder's path: \(reply)")
        }
        XCTAssertTrue(replies[4].contains("line 2"), "the bad line is named by its number: \(replies[4])")
        XCTAssertTrue(replies[8].contains("twice"), "a key given twice is refused: \(replies[8])")
        let graphs = try XCTUnwrap(try Self.stranger(url, ["get", "/graphs"]) as? [String: Any])
        XCTAssertEqual(graphs["status"] as? Int, 200)
        let names = try JSONSerialization.jsonObject(with: Data((graphs["body"] as? String ?? "").utf8)) as? [String]
        XCTAssertEqual(names, ["page-link.json", "page.json"], "the picker lists only what load accepts")
    }

    /// OSC's `load` and `set` are a stranger's too: a graph or a file outside the folder is refused without its
    /// content or the folder's path.
    func testOSCReadsNoFileOutsideItsFolders() throws {
        let files = try Folder("stranger-osc")
        let session = try TestSupport.session(files.graph)
        let status = TestSupport.offlineStatus()
        let control = LiveControl(session: session, status: { status.snapshot($0) }, quit: {})
        let server = OSCServer(port: 0)
        try server.start(control: control)
        defer {
            server.stop()
            control.withSession { $0.close() }
        }
        let port = try XCTUnwrap(server.endpoint?.port)
        let client = try OSCTests.BoundUDPSocket()
        defer { close(client.fd) }
        let folderPrefix = FileAccess.realPath(files.folder)!
        for message in [
            OSCMessage(address: "/graphhost/load", arguments: [.string(files.secret)]),
            OSCMessage(address: "/graphhost/load", arguments: [.string("secret-link.json")]),
            OSCMessage(address: "/graphhost/load", arguments: [.string("../elsewhere.json")]),
            OSCMessage(address: "/graphhost/set", arguments: [.string("eq"), .string("file"), .string(files.secret)]),
            OSCMessage(address: "/graphhost/set", arguments: [.string("eq"), .string("file"), .string("bad-eq.txt")]),
        ] {
            client.send(message, to: port)
            let answer = try XCTUnwrap(try client.receive(), "\(message.address) was not answered")
            guard case .string(let reply)? = answer.arguments.last else {
                throw TestSupport.ToolFailure(description: "\(answer)")
            }
            XCTAssertTrue(reply.contains(#""ok":false"#), "\(message) was not refused: \(reply)")
            XCTAssertFalse(reply.contains(Folder.marker), "\(message) echoed the file: \(reply)")
            XCTAssertFalse(reply.contains(folderPrefix), "\(message) named the folder's path: \(reply)")
        }
    }

    /// A malformed head is answered with 400 at once; two Host headers and an absolute-form URI for another host are
    /// refused with 400; a refused request's connection is closed after its answer; one with the token is kept.
    func testRefusedAndMalformedRequestsAreAnsweredAndClosed() throws {
        let files = try Folder("stranger-heads")
        let (url, control, server) = try Self.serve(files.graph)
        defer {
            server.stop()
            control.withSession { $0.close() }
        }
        let result = try XCTUnwrap(try Self.stranger(url, ["heads"]) as? [String: [String: Any]])
        for name in ["malformed", "twoHosts", "absoluteOtherHost"] {
            XCTAssertEqual(result[name]?["status"] as? Int, 400, "\(name): \(result)")
            XCTAssertEqual(result[name]?["closed"] as? Bool, true, "\(name): \(result)")
        }
        XCTAssertEqual(result["noToken"]?["status"] as? Int, 403, "\(result)")
        XCTAssertEqual(result["noToken"]?["closed"] as? Bool, true, "a refused request keeps its connection: \(result)")
        XCTAssertEqual(result["withToken"]?["status"] as? Int, 200, "\(result)")
        XCTAssertEqual(result["withToken"]?["closed"] as? Bool, false, "\(result)")
        XCTAssertEqual(result["absoluteOwnHost"]?["status"] as? Int, 200, "\(result)")
    }

    /// 300 strangers repeat a refused request every half second (keeping their connections while they can), from
    /// another process: once each has been refused, a client with the token opens the page, the HTML and the
    /// WebSocket's first message, within 1 s.
    func testStrangersRepeatingRefusedRequestsCannotLockThePageOut() throws {
        let files = try Folder("stranger-lockout")
        let (url, control, server) = try Self.serve(files.graph)
        defer {
            server.stop()
            control.withSession { $0.close() }
        }
        let script = TestSupport.root.appendingPathComponent("Tests/WebAttack/stranger.py").path
        let strangers = try HeadlessPipeWire.Running(
            URL(fileURLWithPath: "/usr/bin/python3"), [script, url, "strangers", "300", "4", "0.5"],
            environment: ProcessInfo.processInfo.environment)
        XCTAssertTrue(strangers.waitForError(containing: "ready", timeout: 120), strangers.errorText)
        let opened = try XCTUnwrap(try Self.stranger(url, ["open"]) as? [String: Any])
        let done = strangers.wait(timeout: 120)
        XCTAssertEqual(done.status, 0, done.err)
        let counts = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data((done.out.split(separator: "\n").last ?? "").utf8))
                as? [String: Int], done.out)
        print(
            "lockout: the page opened in \(Format.printf("%.3f", opened["seconds"] as? Double ?? .nan)) s while "
                + "\(counts["strangersRefused"] ?? 0) strangers were refused \(counts["refused"] ?? 0) times")
        XCTAssertEqual(counts["strangersRefused"], 300, "every stranger was refused at least once: \(counts)")
        XCTAssertEqual(opened["pageStatus"] as? Int, 200, "\(opened)")
        XCTAssertEqual(opened["pageHasHTML"] as? Bool, true, "\(opened)")
        XCTAssertEqual(opened["firstMessageHasNodes"] as? Bool, true, "\(opened)")
        XCTAssertLessThan(try XCTUnwrap(opened["seconds"] as? Double), 1, "the page took too long: \(opened)")
    }

    /// 100 connections from one address that send nothing hold at most `perAddressLimit` places; a client with the
    /// token from the same address is still served.
    func testConnectionsFromOneAddressAreBounded() throws {
        let files = try Folder("stranger-silent")
        let (url, control, server) = try Self.serve(files.graph)
        defer {
            server.stop()
            control.withSession { $0.close() }
        }
        let result = try XCTUnwrap(try Self.stranger(url, ["silent", "100"]) as? [String: Int])
        XCTAssertEqual(result["servedStatus"], 200, "\(result)")
        XCTAssertLessThanOrEqual(result["open"] ?? 100, ConnectionGuard().perAddressLimit - 1, "\(result)")
    }
}
