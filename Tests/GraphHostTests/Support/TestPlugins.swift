import Foundation

/// LV2 plugins the tests use: Debian's, by URI, and the bundles under Tests/Fixtures (built by the tests with cc).
enum TestPlugins {
    static let amp = "http://plugin.org.uk/swh-plugins/amp"
    static let fixtures = TestSupport.root.appendingPathComponent("Tests/Fixtures").path
    /// Lets a graphhost process find the fixture bundles.
    static var lv2Path: [String: String] { ["LV2_PATH": fixtures + ":/usr/lib/x86_64-linux-gnu/lv2:/usr/lib/lv2"] }

    /// Builds a fixture's shared library with cc, unless it is newer than its source. cc writes a file of this
    /// process's own, renamed into place: tests running in other processes at the same time load the whole library,
    /// old or new, and a process that has it loaded keeps its own copy.
    static func compile(_ library: String, _ source: String, flags: [String] = ["-O2"], libraries: [String] = [])
        throws
    {
        func modified(_ path: String) -> Date? {
            (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        }
        if let built = modified(library), let written = modified(source), built > written { return }
        let building = library + ".\(getpid()).building"
        try TestSupport.run(["cc", "-shared", "-fPIC"] + flags + ["-o", building, source] + libraries)
        guard rename(building, library) == 0 else {
            throw TestSupport.ToolFailure(description: "cannot move \(building) to \(library): errno \(errno)")
        }
    }
}
