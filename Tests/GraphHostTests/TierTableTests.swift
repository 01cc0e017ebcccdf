import Foundation
import XCTest

/// Tests/tiers names every test class in exactly one tier, so no class drops out of scripts/test unnoticed.
final class TierTableTests: XCTestCase {
    /// Every `XCTestCase` subclass declared under Tests/GraphHostTests, with the file it is declared in.
    static func declaredClasses() throws -> [String: String] {
        let folder = TestSupport.root.appendingPathComponent("Tests/GraphHostTests")
        let pattern = try NSRegularExpression(
            pattern: "^(?:final )?class (\\w+): XCTestCase\\b", options: .anchorsMatchLines)
        var classes: [String: String] = [:]
        let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
        for file in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                classes[String(text[Range(match.range(at: 1), in: text)!])] = file
            }
        }
        return classes
    }

    /// What is wrong with `rows` for the classes `declared`: a row's unknown tier or class, a class in no tier or
    /// in more than one.
    static func problems(declared: [String: String], rows: [(tier: String, name: String, line: Int)]) -> [String] {
        var problems: [String] = []
        var tiers: [String: [String]] = [:]
        for row in rows {
            if TestTier(rawValue: row.tier) == nil {
                problems.append("Tests/tiers:\(row.line): '\(row.tier)' is not a tier (fast, live, browser, long)")
            }
            if declared[row.name] == nil { problems.append("Tests/tiers:\(row.line): no test class \(row.name)") }
            tiers[row.name, default: []].append(row.tier)
        }
        for (name, file) in declared.sorted(by: { $0.key < $1.key }) {
            let named = tiers[name] ?? []
            if named.isEmpty { problems.append("\(name) (\(file)) is in no tier: add it to Tests/tiers") }
            if named.count > 1 {
                problems.append("\(name) is in \(named.count) tiers (\(named.joined(separator: ", "))): keep one")
            }
        }
        return problems
    }

    func testEveryClassIsInExactlyOneTier() throws {
        let declared = try Self.declaredClasses()
        XCTAssertEqual(declared["TierTableTests"], "TierTableTests.swift", "the test classes were not found")
        XCTAssertEqual(Self.problems(declared: declared, rows: try TestTier.rows()), [])
    }

    /// The check finds a class declared without a tier, one named twice, and a row naming no class or no tier.
    func testTheCheckFindsAClassWithoutATierAndOneInTwo() throws {
        var declared = try Self.declaredClasses()
        declared["UntieredTests"] = "Engine/UntieredTests.swift"
        var rows = try TestTier.rows()
        rows.append((tier: "live", name: "ChainTests", line: 1000))
        rows.append((tier: "slow", name: "GoneTests", line: 1001))
        XCTAssertEqual(
            Self.problems(declared: declared, rows: rows),
            [
                "Tests/tiers:1001: 'slow' is not a tier (fast, live, browser, long)",
                "Tests/tiers:1001: no test class GoneTests",
                "ChainTests is in 2 tiers (fast, live): keep one",
                "UntieredTests (Engine/UntieredTests.swift) is in no tier: add it to Tests/tiers",
            ])
    }
}
