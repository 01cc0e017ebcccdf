import Foundation
import XCTest

/// The render world is a module the compiler keeps apart: GraphHostCore and GraphHostDSP import nothing
/// that allocates behind the render thread's back (Foundation, Logging) or that belongs to the control world
/// (lilv, PipeWire, curl, decoders). Core's only C module is the LV2 headers.
final class LayoutTests: XCTestCase {
    static let sources = CommandLineTests.root.appendingPathComponent("Sources")

    /// Every `import` of the Swift files under Sources/MODULE, as "file:line: module".
    func imports(of module: String) throws -> [(place: String, module: String)] {
        let folder = Self.sources.appendingPathComponent(module)
        guard let files = FileManager.default.enumerator(atPath: folder.path) else { throw CocoaError(.fileNoSuchFile) }
        var found: [(String, String)] = []
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let words = line.split(separator: " ")
                if let i = words.firstIndex(of: "import"), i + 1 < words.count, words[..<i].allSatisfy({ $0.hasPrefix("@") }) {
                    found.append(("\(module)/\(file):\(n + 1)", String(words[i + 1])))
                }
            }
        }
        XCTAssertFalse(found.isEmpty, "no imports found under \(folder.path)")
        return found
    }

    func testTheRenderCoreImportsOnlyWhatTheCallbackMayUse() throws {
        for (place, module) in try imports(of: "GraphHostCore") {
            XCTAssertTrue(["Atomics", "CLV2", "Glibc", "Synchronization"].contains(module), "\(place) imports \(module)")
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
                XCTAssertFalse(["Foundation", "FoundationNetworking", "FoundationXML"].contains(imported), "\(place) imports \(imported)")
            }
        }
    }
}
