import FoundationEssentials
import XCTest

@testable import GraphHost

/// The fuzz targets' seeds (Tests/Fuzz/Seeds) and every finding fixed so far (Tests/Fuzz/Findings), run through their
/// parsers in the plain build: a finding that comes back traps here. scripts/fuzz runs the targets under libFuzzer.
final class FuzzRegressionTests: XCTestCase {
    static let folder = TestSupport.root.appendingPathComponent("Tests/Fuzz")

    static func files(_ kind: String, _ target: String) -> [URL] {
        let dir = folder.appendingPathComponent("\(kind)/\(target)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.sorted().map { dir.appendingPathComponent($0) }
    }

    func testEveryTargetHasSeedsAndEverySeedParses() throws {
        for target in ParserEntryPoints.all {
            let seeds = Self.files("Seeds", target.name)
            XCTAssertFalse(seeds.isEmpty, "no seeds for \(target.name)")
            for seed in seeds { target.run([UInt8](try Data(contentsOf: seed))) }
        }
        let folders = try FileManager.default.contentsOfDirectory(
            atPath: Self.folder.appendingPathComponent("Seeds").path)
        XCTAssertEqual(Set(folders), Set(ParserEntryPoints.all.map(\.name)), "a seed folder for each target, no other")
    }

    /// Every file under Tests/Fuzz/Findings is replayed (each folder there names a target), and there are some.
    func testEveryFixedFindingStaysFixed() throws {
        let findings = Self.folder.appendingPathComponent("Findings")
        let folders = try FileManager.default.contentsOfDirectory(atPath: findings.path)
        XCTAssertEqual(
            Set(folders).subtracting(ParserEntryPoints.all.map(\.name)), [], "a findings folder that names no target")
        let stored = folders.reduce(0) { $0 + Self.files("Findings", $1).count }
        var replayed = 0
        for target in ParserEntryPoints.all {
            for finding in Self.files("Findings", target.name) {
                target.run([UInt8](try Data(contentsOf: finding)))
                replayed += 1
            }
        }
        print("fuzz findings replayed: \(replayed)")
        XCTAssertGreaterThan(replayed, 0, "no finding replayed: Tests/Fuzz/Findings was not found")
        XCTAssertEqual(replayed, stored, "findings stored but not replayed")
    }
}
