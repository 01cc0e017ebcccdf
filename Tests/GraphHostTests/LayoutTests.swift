import Foundation
import XCTest

/// The render world is a module the compiler keeps apart: GraphHostCore and GraphHostDSP import nothing
/// that allocates behind the render thread's back (Foundation, Logging) or that belongs to the control world
/// (lilv, PipeWire, curl, decoders). Core's C modules are the LV2 headers, the level meter's loop (CMeterGlue), the
/// EQ's filter bank (CFilterBankGlue) and the futexes render threads wait on (CRenderWaitGlue).
final class LayoutTests: XCTestCase {
    static let sources = TestSupport.root.appendingPathComponent("Sources")

    /// Every `import` of the Swift files under Sources/MODULE, as "file:line: module".
    func imports(of module: String) throws -> [(place: String, module: String)] {
        let folder = Self.sources.appendingPathComponent(module)
        guard let files = FileManager.default.enumerator(atPath: folder.path) else { throw CocoaError(.fileNoSuchFile) }
        var found: [(String, String)] = []
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let words = line.split(separator: " ")
                if let i = words.firstIndex(of: "import"), i + 1 < words.count,
                    words[..<i].allSatisfy({ $0.hasPrefix("@") })
                {
                    found.append(("\(module)/\(file):\(n + 1)", String(words[i + 1])))
                }
            }
        }
        XCTAssertFalse(found.isEmpty, "no imports found under \(folder.path)")
        return found
    }

    func testTheRenderCoreImportsOnlyWhatTheCallbackMayUse() throws {
        for (place, module) in try imports(of: "GraphHostCore") {
            let allowed = [
                "Atomics", "CFilterBankGlue", "CLV2", "CMeterGlue", "CRenderWaitGlue", "Glibc", "Synchronization",
            ]
            XCTAssertTrue(allowed.contains(module), "\(place) imports \(module)")
        }
    }

    func testTheEQMathImportsOnlyTheCLibrary() throws {
        for (place, module) in try imports(of: "GraphHostDSP") {
            XCTAssertEqual(module, "Glibc", "\(place) imports \(module)")
        }
    }

    /// The control world and the command line use FoundationEssentials: Foundation would bring CoreFoundation and
    /// ICU into the process (about 9 MiB resident, and the start-up that loading them costs).
    func testNothingImportsFoundation() throws {
        for module in ["GraphHost", "graphhost", "GraphHostIPodEQLV2"] {
            for (place, imported) in try imports(of: module) {
                XCTAssertFalse(
                    ["Foundation", "FoundationNetworking", "FoundationXML"].contains(imported),
                    "\(place) imports \(imported)")
            }
        }
    }

    /// The Swift files under Sources/, as (path relative to Sources/, text).
    func swiftSources() throws -> [(path: String, text: String)] {
        guard let files = FileManager.default.enumerator(atPath: Self.sources.path) else {
            throw CocoaError(.fileNoSuchFile)
        }
        var found: [(String, String)] = []
        for case let file as String in files where file.hasSuffix(".swift") {
            found.append((file, try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)))
        }
        return found
    }

    /// A node kind is known by its descriptor and protocol members: only Sources/GraphHost/Nodes/ names the concrete
    /// definitions and instances (`as? LV2Node`, `is MixerNode`, `case let x as StreamInstance`).
    func testNoDowncastToANodeKindOutsideNodes() throws {
        let sources = try swiftSources()
        let declaration = try NSRegularExpression(
            pattern: #"(?:struct|class)\s+(\w+)\s*:[^{]*\b(?:NodeDefinition|NodeInstance)\b"#)
        var kinds: Set<String> = []
        for (path, text) in sources where path.hasPrefix("GraphHost/Nodes/") {
            for match in declaration.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                kinds.insert(String(text[Range(match.range(at: 1), in: text)!]))
            }
        }
        XCTAssertTrue(
            kinds.isSuperset(of: ["MixerNode", "LV2Node", "LV2Instance", "StreamInstance"]),
            "node kinds found: \(kinds.sorted())")
        let cast = try NSRegularExpression(
            pattern: #"\b(?:as[?!]?|is)\s+(?:any\s+)?(\#(kinds.sorted().joined(separator: "|")))\b"#)
        for (path, text) in sources where !path.hasPrefix("GraphHost/Nodes/") {
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = String(line)
                if let match = cast.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) {
                    let kind = line[Range(match.range(at: 1), in: line)!]
                    XCTFail(
                        "Sources/\(path):\(n + 1): downcast to the node kind \(kind); "
                            + "use its descriptor or a NodeDefinition/NodeInstance member"
                    )
                }
            }
        }
    }

    /// Results, statuses and events are typed values, encoded to JSON only at the edge: no `[String: Any]` anywhere.
    func testTheControlWorldHasNoUntypedDictionaries() throws {
        for module in ["GraphHost", "graphhost"] {
            let folder = Self.sources.appendingPathComponent(module)
            guard let files = FileManager.default.enumerator(atPath: folder.path) else {
                throw CocoaError(.fileNoSuchFile)
            }
            var read = 0
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                read += 1
                for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where line.contains("String: Any]") {
                    XCTFail("\(module)/\(file):\(n + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
            XCTAssertGreaterThan(read, 0, "no Swift files under \(folder.path)")
        }
    }

    /// Text errors are made only where text is read: the command language's parser (Session/Command.swift, with
    /// CommandHelp for `help VERB` and Subscription for `subscribe`) and ControlError's case that carries one;
    /// everything else throws typed errors.
    func testCommandErrorStaysAtTheParsersEdge() throws {
        let edge = [
            "GraphHost/Session/Command.swift", "GraphHost/Session/CommandHelp.swift",
            "GraphHost/Session/ControlError.swift", "GraphHost/Session/Subscription.swift",
        ]
        let word = try NSRegularExpression(pattern: #"\bCommandError\b"#)
        var seen = 0
        for (path, text) in try swiftSources() {
            let uses = word.numberOfMatches(in: text, range: NSRange(text.startIndex..., in: text))
            if edge.contains(path) {
                seen += uses
            } else if uses > 0 {
                XCTFail("Sources/\(path): \(uses) uses of CommandError; throw a typed error of the file's own domain")
            }
        }
        XCTAssertGreaterThan(seen, 0, "the parser's edge makes its errors")
    }

    /// The C targets under Sources/ (a folder named C + a capital): the system-library shims and graphhost's glue.
    func cTargets() throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.sources.path)
        let targets = names.filter { $0.count > 1 && $0.hasPrefix("C") && $0.dropFirst().first!.isUppercase }.sorted()
        XCTAssertFalse(targets.isEmpty, "no C targets under \(Self.sources.path)")
        return targets
    }

    /// CONTRIBUTING.md's rule: a shim (a module map) is C + the library's name without `lib`; glue (C code of ours)
    /// ends in `Glue` and its headers in `_glue.h`.
    func testCTargetsFollowTheNamingRule() throws {
        for target in try cTargets() {
            let folder = Self.sources.appendingPathComponent(target)
            let map = folder.appendingPathComponent("module.modulemap")
            if FileManager.default.fileExists(atPath: map.path) {
                XCTAssertFalse(
                    target.hasSuffix("Glue") || target.hasPrefix("CLib"),
                    "\(target) is a shim named like glue or with lib")
                let text = try String(contentsOf: map, encoding: .utf8)
                XCTAssertTrue(text.hasPrefix("module \(target) "), "\(target)/module.modulemap declares another module")
            } else {
                XCTAssertTrue(target.hasSuffix("Glue"), "\(target) holds C code but is not named ...Glue")
                let headers = try FileManager.default.contentsOfDirectory(
                    atPath: folder.appendingPathComponent("include").path)
                XCTAssertFalse(headers.isEmpty, "\(target) has no header")
                for header in headers {
                    XCTAssertTrue(header.hasSuffix("_glue.h"), "\(target)/include/\(header) is not named ..._glue.h")
                }
            }
        }
    }

    /// Every function, type, enum constant and macro a glue header declares starts with gh_ (GH_ for macros and
    /// constants), so a Swift caller can tell graphhost's C from a library's.
    func testGlueDeclaresOnlyPrefixedNames() throws {
        let declarations = [
            #/^(?:static inline |extern )?[A-Za-z_][A-Za-z0-9_ ]*[ *]+([A-Za-z_]\w*)\(/#,
            #/^typedef .*\(\*([A-Za-z_]\w*)\)/#,
            #/^typedef (?:struct|enum) \w+ (\w+);/#,
            #/^} (\w+);/#,
            #/^enum (\w+)/#,
            #/^#(?:define|ifndef) (\w+)/#,
        ]
        let constant = #/(\w+) = -?[0-9]/#
        var checked = 0
        for target in try cTargets() where target.hasSuffix("Glue") {
            let include = Self.sources.appendingPathComponent(target).appendingPathComponent("include")
            for header in try FileManager.default.contentsOfDirectory(atPath: include.path) {
                let text = try String(contentsOf: include.appendingPathComponent(header), encoding: .utf8)
                for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let topLevel = line.first.map { $0.isLetter || $0 == "#" || $0 == "}" } ?? false
                    var names = line.matches(of: constant).map { String($0.1) }
                    if topLevel { names += declarations.compactMap { line.firstMatch(of: $0).map { String($0.1) } } }
                    for name in names {
                        checked += 1
                        XCTAssertTrue(
                            name.hasPrefix("gh_") || name.hasPrefix("GH_"),
                            "\(target)/include/\(header):\(n + 1) declares \(name)")
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 50, "too few declarations found: the patterns no longer match the headers")
    }
}
