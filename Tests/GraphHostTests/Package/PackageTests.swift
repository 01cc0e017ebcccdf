import Foundation
import XCTest

@testable import GraphHost

/// The Debian package of `scripts/package`: lintian finds no error, it holds what a user needs, its dependencies are
/// Debian's, and its binary runs with no Swift toolchain. Installing it in a fresh root is `scripts/package-check`.
final class PackageTests: XCTestCase {
    /// The package `scripts/test` built (`GRAPHHOST_DEB`), or one built now.
    static let deb: Result<String, Error> = Result {
        if let path = ProcessInfo.processInfo.environment["GRAPHHOST_DEB"], !path.isEmpty { return path }
        let r = try TestSupport.execute(TestSupport.root.appendingPathComponent("scripts/package"), [])
        guard r.status == 0 else {
            throw TestSupport.ToolFailure(description: "scripts/package: \(String(decoding: r.err, as: UTF8.self))")
        }
        let path = String(decoding: r.out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return path.hasPrefix("/") ? path : TestSupport.root.appendingPathComponent(path).path
    }

    /// The package unpacked (`dpkg-deb -x`) into a folder of its own.
    static let unpacked: Result<URL, Error> = Result {
        let folder = TestSupport.directory.appendingPathComponent("package-root")
        try? FileManager.default.removeItem(at: folder)
        try TestSupport.run(["dpkg-deb", "-x", try deb.get(), folder.path])
        return folder
    }

    static func text(_ arguments: [String]) throws -> String {
        String(decoding: try TestSupport.run(arguments), as: UTF8.self)
    }

    /// Runs the unpacked binary from `/` with a plain environment: no toolchain on PATH, no library path, LV2 plugins
    /// only from the package's folder.
    static func unpackedGraphhost(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let root = try unpacked.get()
        let r = try TestSupport.execute(
            root.appendingPathComponent("usr/bin/graphhost"), arguments,
            environment: [
                "PATH": "/usr/bin:/bin", "HOME": TestSupport.directory.path,
                "LV2_PATH": root.appendingPathComponent("usr/lib/lv2").path,
            ], directory: URL(fileURLWithPath: "/"))
        return (r.status, String(decoding: r.out, as: UTF8.self), String(decoding: r.err, as: UTF8.self))
    }

    func testLintianFindsNoError() throws {
        let r = try TestSupport.execute(
            URL(fileURLWithPath: "/usr/bin/env"), ["lintian", "--fail-on", "error", try Self.deb.get()])
        let report = String(decoding: r.out + r.err, as: UTF8.self)
        XCTAssertEqual(r.status, 0, report)
        XCTAssertFalse(report.contains("E: "), report)
    }

    func testItHoldsTheBinaryBundleExamplesManPageCompletionsAndUserUnit() throws {
        let listing = try Self.text(["dpkg-deb", "-c", try Self.deb.get()])
        for path in [
            "./usr/bin/graphhost", "./usr/lib/lv2/graphhost-ipod-eq.lv2/manifest.ttl",
            "./usr/lib/lv2/graphhost-ipod-eq.lv2/libGraphHostIPodEQLV2.so", "./usr/share/graphhost/examples/demo.json",
            "./usr/share/graphhost/examples/media/demo.mp3", "./usr/share/man/man1/graphhost.1.gz",
            "./usr/share/bash-completion/completions/graphhost", "./usr/share/zsh/vendor-completions/_graphhost",
            "./usr/share/fish/vendor_completions.d/graphhost.fish", "./usr/lib/systemd/user/graphhost.service",
            "./usr/share/doc/graphhost/copyright",
        ] {
            XCTAssertTrue(listing.contains(" \(path)\n"), "the package lacks \(path)")
        }
        let root = try Self.unpacked.get()
        let man = try Self.text(["zcat", root.appendingPathComponent("usr/share/man/man1/graphhost.1.gz").path])
        for command in ["run", "render", "service", "plugins"] {
            XCTAssertTrue(man.contains(command), "the man page does not describe '\(command)'")
        }
        let bash = try String(
            contentsOf: root.appendingPathComponent("usr/share/bash-completion/completions/graphhost"), encoding: .utf8)
        XCTAssertTrue(bash.contains("service"), "bash completion lacks the service command")
        let unit = try String(
            contentsOf: root.appendingPathComponent("usr/lib/systemd/user/graphhost.service"), encoding: .utf8)
        XCTAssertTrue(unit.contains("ExecStart=/usr/bin/graphhost service run "), unit)
        XCTAssertTrue(unit.contains("Restart=on-failure"), unit)
        XCTAssertTrue(unit.contains(" --idle-after 5"), unit)
    }

    func testItDependsOnDebianLibrariesAndNotOnSwift() throws {
        let depends = try Self.text(["dpkg-deb", "-f", try Self.deb.get(), "Depends"])
        for library in [
            "libc6", "libpipewire-0.3-0", "liblilv-0-0", "libmpg123-0", "libavformat59", "libcurl4", "libsystemd0",
        ] {
            XCTAssertTrue(depends.contains(library), "Depends lacks \(library): \(depends)")
        }
        XCTAssertFalse(depends.lowercased().contains("swift"), depends)
        let root = try Self.unpacked.get()
        for binary in ["usr/bin/graphhost", "usr/lib/lv2/graphhost-ipod-eq.lv2/libGraphHostIPodEQLV2.so"] {
            let linked = try Self.text(["ldd", root.appendingPathComponent(binary).path])
            XCTAssertFalse(linked.contains("swift"), "\(binary) links the Swift runtime: \(linked)")
            XCTAssertFalse(linked.contains("not found"), "\(binary) misses a library: \(linked)")
        }
    }

    /// The release build links the Swift runtime in, as the package does: a process starts without resolving the
    /// runtime's symbols through the dynamic linker (BENCHMARKS.md's render section counts the start).
    func testTheReleaseBuildCarriesTheSwiftRuntime() throws {
        let binary = TestSupport.executable.path
        let needed = try Self.text(["readelf", "-d", binary]).split(separator: "\n").filter { $0.contains("(NEEDED)") }
        XCTAssertTrue(needed.contains { $0.contains("libmpg123") }, "\(needed)")
        for runtime in ["libswift", "libFoundation", "libdispatch", "libBlocksRuntime"] {
            XCTAssertFalse(needed.contains { $0.contains(runtime) }, "\(binary) needs \(runtime): \(needed)")
        }
    }

    /// The unpacked binary, with nothing of the toolchain, lists the packaged plugin and renders the packaged demo
    /// through it.
    func testTheUnpackedBinaryFindsItsBundleAndRendersTheDemo() throws {
        let listed = try Self.unpackedGraphhost(["plugins", "ipod"])
        XCTAssertEqual(listed.status, 0, listed.err)
        XCTAssertTrue(listed.out.contains("urn:graphhost:ipod-eq"), listed.out)
        let root = try Self.unpacked.get()
        let examples = root.appendingPathComponent("usr/share/graphhost/examples")
        let graph = TestSupport.directory.appendingPathComponent("package-lv2.json").path
        let json = """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(examples.path)/media/demo.mp3" },
                         { "id": "eq", "type": "lv2", "uri": "urn:graphhost:ipod-eq" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "eq" }, { "from": "eq", "to": "out" } ] }
            """
        FileManager.default.createFile(atPath: graph, contents: Data(json.utf8))
        for source in [examples.appendingPathComponent("demo.json").path, graph] {
            let wav = TestSupport.directory.appendingPathComponent("package-render.wav").path
            let rendered = try Self.unpackedGraphhost(["render", source, "-o", wav, "--duration", "2"])
            XCTAssertEqual(rendered.status, 0, "\(source): \(rendered.err)")
            let samples = try SoundFile(path: wav).samples
            XCTAssertEqual(samples.count, 2 * 48000 * 2, source)
            XCTAssertTrue(samples.allSatisfy(\.isFinite), source)
            XCTAssertGreaterThan(TestSupport.peak(samples), 0.05, "\(source) renders silence")
        }
    }
}
