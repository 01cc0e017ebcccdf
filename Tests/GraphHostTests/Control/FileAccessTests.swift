import Foundation
import XCTest

@testable import GraphHost

/// `FileAccess`: the owner reads any file; a remote surface, and a graph it loads, only regular files that resolve
/// (symlinks included) into the graph's folder or graphhost's configuration folder.
final class FileAccessTests: XCTestCase {
    func testARemoteSurfaceReadsOnlyInsideTheGraphsFolderAndGraphhostsOwn() throws {
        let files = try WebStrangerTests.Folder("file-access")
        let config = TestSupport.directory.appendingPathComponent("file-access-config").path
        try FileManager.default.createDirectory(atPath: config + "/graphhost", withIntermediateDirectories: true)
        try "Preamp: -1 dB\n".write(toFile: config + "/graphhost/mine.txt", atomically: true, encoding: .utf8)
        let remote = FileAccess.remote(graphFolder: files.folder, environment: ["XDG_CONFIG_HOME": config])
        let folder = FileAccess.realPath(files.folder)!

        XCTAssertEqual(try remote.commandPath("bad-eq.txt"), folder + "/bad-eq.txt")
        XCTAssertEqual(try remote.commandPath("page-link.json"), folder + "/page.json", "a link that stays inside")
        XCTAssertEqual(
            try remote.commandPath(config + "/graphhost/mine.txt"),
            FileAccess.realPath(config)! + "/graphhost/mine.txt")
        for refused in [files.secret, "../secret.txt", "secret-link.txt", "/etc/passwd", "missing.txt", ".", "/"] {
            XCTAssertThrowsError(try remote.commandPath(refused), refused) { error in
                XCTAssertFalse("\(error)".contains(folder), "\(error)")
            }
        }
        XCTAssertNoThrow(try remote.confine(files.folder, given: "graphs", folder: true))
        XCTAssertThrowsError(try remote.confine("/tmp", given: "/tmp", folder: true))
        XCTAssertEqual(remote.redact("cannot read \(folder)/x.json in \(folder)"), "cannot read x.json in .")
        let linked = TestSupport.directory.appendingPathComponent("file-access-linked").path
        try? FileManager.default.removeItem(atPath: linked)
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: files.folder)
        let throughLink = FileAccess.remote(graphFolder: linked, environment: [:])
        XCTAssertEqual(throughLink.redact("\(linked)/a.json and \(folder)/b.json"), "a.json and b.json")
        XCTAssertEqual(try FileAccess.owner.commandPath(files.secret), files.secret)
        XCTAssertEqual(FileAccess.owner.redact(folder), folder)
    }

    /// A graph a remote surface loads names its files under the same rule: a stream, a `peq` file or a MIDI file
    /// outside the folder fails the load, naming the setting and not the file's content.
    func testAGraphLoadedRemotelyIsConfinedToo() throws {
        let files = try WebStrangerTests.Folder("file-access-graph")
        let remote = FileAccess.remote(graphFolder: files.folder, environment: [:])
        XCTAssertNoThrow(try GraphDocument.load(path: files.graph, files: remote))
        let outside = files.folder + "/reads-outside.json"
        try "Preamp: -1 dB\n".write(toFile: files.folder + "/../outside-eq.txt", atomically: true, encoding: .utf8)
        try """
        { "nodes": [ { "id": "s", "type": "stream", "url": "\(try TestSupport.sine(seconds: 1))" },
                     { "id": "eq", "type": "peq", "file": "../outside-eq.txt" },
                     { "id": "out", "type": "output" } ],
          "links": [ { "from": "s", "to": "eq" }, { "from": "eq", "to": "out" } ] }
        """.write(toFile: outside, atomically: true, encoding: .utf8)
        XCTAssertNoThrow(try GraphDocument.load(path: outside, files: .owner).nodes.count, "the owner may")
        XCTAssertThrowsError(try GraphDocument.load(path: outside, files: remote)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("nodes[0].url") && text.contains("nodes[1].file"), text)
            XCTAssertFalse(text.contains("Preamp"), text)
        }
    }
}
