import Foundation
import XCTest

@testable import GraphHost

/// Discovery that survives bad bundles: dynamic-manifest libraries that crash, abort in a static constructor, exit or
/// hang while lilv lists them (Tests/Fixtures/probe-faults, built here) are probed in a child process, named and left
/// out; `graphhost` lists the rest, renders with them and keeps the verdicts in its cache; the default path is lilv's.
/// LADSPA libraries are probed the same way.
final class LV2DiscoveryTests: XCTestCase {
    static let faults = ["crash", "abort", "exit", "hang"]

    /// A folder of bundles: `good` (a working dynamic manifest) and one per fault.
    static let folder: URL = {
        let folder = TestSupport.directory.appendingPathComponent("lv2-probe")
        let source = TestPlugins.fixtures + "/probe-faults/dyn_manifest.c"
        for name in ["good"] + faults {
            let bundle = folder.appendingPathComponent("\(name).lv2")
            try? FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
            _ = try? TestSupport.run([
                "cc", "-shared", "-fPIC", "-O2", "-DFAULT=\(name.uppercased())", "-o", bundle.path + "/dyn.so", source,
            ])
            try? """
            @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
            @prefix dman: <http://lv2plug.in/ns/ext/dynmanifest#> .

            <urn:graphhost:test:dyn-\(name)> a dman:DynManifest ; lv2:binary <dyn.so> .

            """.write(to: bundle.appendingPathComponent("manifest.ttl"), atomically: true, encoding: .utf8)
        }
        return folder
    }()

    /// Runs `graphhost ARGUMENTS` with the fault bundles and Debian's on LV2_PATH, a cache in `cache`, a 2 s hang bound
    /// and the good library's opens noted in `log`.
    func graphhost(_ arguments: [String], cache: URL, log: URL) throws -> (status: Int32, out: String, err: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["LV2_PATH"] = Self.folder.path + ":/usr/lib/lv2"
        environment["XDG_CACHE_HOME"] = cache.path
        environment["GRAPHHOST_LV2_PROBE_SECONDS"] = "2"
        environment["GRAPHHOST_TEST_PROBE_LOG"] = log.path
        let r = try TestSupport.execute(TestSupport.executable, arguments, environment: environment)
        return (r.status, String(decoding: r.out, as: UTF8.self), String(decoding: r.err, as: UTF8.self))
    }

    func scratch(_ name: String) -> URL {
        let url = TestSupport.directory.appendingPathComponent("lv2-probe-\(name)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func opens(_ log: URL) -> Int {
        ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    func testBundlesThatCrashAbortExitOrHangWhileListedAreNamedAndLeftOut() throws {
        let cache = scratch("cache")
        let log = cache.appendingPathComponent("opens")
        let listed = try graphhost(["plugins"], cache: cache, log: log)
        XCTAssertEqual(listed.status, 0, listed.err)
        XCTAssertTrue(listed.out.contains("urn:graphhost:test:dyn-good\n  name: Dynamic manifest test"), listed.out)
        XCTAssertTrue(listed.out.contains(LV2HostTests.detune), "Debian's plugins are listed beside them")
        let reasons = [
            "crash": "killed by SIGSEGV", "abort": "killed by SIGABRT", "exit": "exited with status 3",
            "hang": "no answer within 2 s",
        ]
        for (name, reason) in reasons {
            let bundle = Self.folder.appendingPathComponent("\(name).lv2").path + "/"
            XCTAssertTrue(
                listed.err.contains("LV2 bundle \(bundle) left out: loading it failed in a probe process: \(reason)"),
                "\(name): \(listed.err)")
        }
        // The good library was opened twice: once in the probe, once in graphhost.
        XCTAssertEqual(opens(log), 2)

        // A graph with a plugin from the same path renders.
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(try TestSupport.sine(seconds: 1))" },
                         { "id": "fx", "type": "lv2", "uri": "\(LV2HostTests.detune)" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """, name: "probe-render")
        let output = cache.appendingPathComponent("out.wav").path
        let rendered = try graphhost(["render", graph, "-o", output], cache: cache, log: log)
        XCTAssertEqual(rendered.status, 0, rendered.err)
        XCTAssertTrue(FileManager.default.fileExists(atPath: output))
    }

    func testTheProbesVerdictsAreKeptUntilABundleChanges() throws {
        let cache = scratch("kept")
        let log = cache.appendingPathComponent("opens")
        let file = cache.appendingPathComponent("graphhost/lv2-probe.json")
        XCTAssertEqual(try graphhost(["plugins"], cache: cache, log: log).status, 0)
        XCTAssertEqual(opens(log), 2)
        let verdicts = try XCTUnwrap(JSONParser.parse(String(contentsOf: file, encoding: .utf8))["bundles"])
        XCTAssertNil(verdicts[Self.folder.appendingPathComponent("good.lv2").path + "/"]?["failure"]?.stringValue)
        XCTAssertEqual(
            verdicts[Self.folder.appendingPathComponent("crash.lv2").path + "/"]?["failure"]?.stringValue,
            "killed by SIGSEGV (Segmentation fault)")

        // Again: no probe (the good library is opened once more, by graphhost alone), the same bundles left out.
        let again = try graphhost(["plugins"], cache: cache, log: log)
        XCTAssertEqual(opens(log), 3)
        XCTAssertTrue(again.err.contains("crash.lv2/ left out"), again.err)
        XCTAssertTrue(again.err.contains("hang.lv2/ left out"), again.err)

        // A changed bundle is probed again.
        let library = Self.folder.appendingPathComponent("good.lv2/dyn.so").path
        let later = Date().addingTimeInterval(60)
        try FileManager.default.setAttributes([.modificationDate: later], ofItemAtPath: library)
        XCTAssertEqual(try graphhost(["plugins"], cache: cache, log: log).status, 0)
        XCTAssertEqual(opens(log), 5)
    }

    /// LADSPA libraries that abort when opened or crash when asked for their plugins: `plugins --ladspa` names them
    /// and lists the others; a graph naming one is refused with the reason, and graphhost does not die.
    func testLADSPALibrariesThatAbortOrCrashAreNamedAndLeftOut() throws {
        let folder = TestSupport.directory.appendingPathComponent("ladspa-probe")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for fault in ["abort", "crash"] {
            try TestSupport.run([
                "cc", "-shared", "-fPIC", "-O2", "-DFAULT=\(fault.uppercased())", "-o", folder.path + "/\(fault).so",
                TestPlugins.fixtures + "/probe-faults/ladspa_faults.c",
            ])
        }
        var environment = ProcessInfo.processInfo.environment
        environment["LADSPA_PATH"] = folder.path + ":/usr/lib/ladspa"
        let listed = try TestSupport.execute(
            TestSupport.executable, ["plugins", "--ladspa"], environment: environment)
        let out = String(decoding: listed.out, as: UTF8.self)
        let err = String(decoding: listed.err, as: UTF8.self)
        XCTAssertEqual(listed.status, 0, err)
        XCTAssertTrue(out.contains("1181 amp\n"), out)
        XCTAssertTrue(
            err.contains("\(folder.path)/abort.so left out: loading it failed in a probe process: killed by SIGABRT"),
            err)
        XCTAssertTrue(
            err.contains("\(folder.path)/crash.so left out: loading it failed in a probe process: killed by SIGSEGV"),
            err)
        let graph = TestSupport.graph(
            """
            { "nodes": [ { "id": "song", "type": "stream", "url": "\(try TestSupport.sine(seconds: 1))" },
                         { "id": "fx", "type": "ladspa", "plugin": "abort", "label": "x" },
                         { "id": "out", "type": "output" } ],
              "links": [ { "from": "song", "to": "fx" }, { "from": "fx", "to": "out" } ] }
            """, name: "ladspa-probe")
        let refused = try TestSupport.execute(
            TestSupport.executable, ["validate", graph], environment: environment)
        let reason = String(decoding: refused.err, as: UTF8.self)
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(
            reason.contains(
                "nodes[1].plugin: \(folder.path)/abort.so left out: loading it failed in a probe process: "
                    + "killed by SIGABRT"), reason)
    }

    /// With no LV2_PATH graphhost searches lilv's default path, the one compiled into Debian's liblilv (Debian's
    /// multiarch folder included), and lists what lilv's own lv2ls lists.
    func testTheDefaultPathIsLilvs() throws {
        let library = try Data(contentsOf: URL(fileURLWithPath: "/usr/lib/x86_64-linux-gnu/liblilv-0.so.0"))
        let start = try XCTUnwrap(library.firstRange(of: Data("~/.lv2:".utf8))).lowerBound
        let end = try XCTUnwrap(library[start...].firstIndex(of: 0))
        XCTAssertEqual(LV2World.defaultPath, String(decoding: library[start..<end], as: UTF8.self))
        XCTAssertTrue(LV2World.defaultPath.contains("/usr/lib/x86_64-linux-gnu/lv2"))
        var environment = ProcessInfo.processInfo.environment
        environment["LV2_PATH"] = nil
        environment["HOME"] = scratch("home").path
        let lilv = try TestSupport.execute(URL(fileURLWithPath: "/usr/bin/lv2ls"), [], environment: environment)
        let ours = try TestSupport.execute(TestSupport.executable, ["plugins", "--json"], environment: environment)
        XCTAssertEqual(ours.status, 0)
        let listed = try XCTUnwrap(JSONSerialization.jsonObject(with: ours.out) as? [[String: Any]])
            .compactMap { $0["uri"] as? String }.filter { !$0.hasPrefix("urn:graphhost:") }
        let expected = String(decoding: lilv.out, as: UTF8.self).split(separator: "\n").map(String.init)
        XCTAssertFalse(expected.isEmpty)
        XCTAssertEqual(Set(listed), Set(expected))
    }
}
