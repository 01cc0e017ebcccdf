import CLADSPAGlue
import FoundationEssentials
import Glibc
import Synchronization

/// The LADSPA plugins of LADSPA_PATH (or `defaultPath`): libraries opened on first use and kept open, plugins found by
/// library and label or by unique id. Control world.
public final class LADSPALibraries: Sendable {
    public static let shared = LADSPALibraries()

    /// Where Debian's packages put LADSPA libraries (the multiarch folder, as PipeWire's filter-chain searches it, and
    /// the plain one), after the user's and the local folders.
    public static var defaultPath: String {
        "~/.ladspa:/usr/local/lib/ladspa:/usr/lib/\(Multiarch.triplet)/ladspa:/usr/lib/ladspa"
    }

    public let searchPath: String
    private let folders: [String]
    /// Each library looked at, by path: its plugins, or why it cannot be used (its probe failed, dlopen failed, or it
    /// holds no plugin).
    private let opened = Mutex<[String: Result<[LADSPAPlugin], LADSPAError>]>([:])

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        searchPath = environment["LADSPA_PATH"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultPath
        folders = PluginProbe.folders(searchPath, home: environment["HOME"])
    }

    /// Why a library or plugin could not be used.
    public struct LADSPAError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// The library a setting names: a path, or a file name (".so" may be left out) in the search path.
    public func path(of library: String) -> String? {
        let name = library.hasSuffix(".so") ? library : library + ".so"
        if name.contains("/") { return FileManager.default.fileExists(atPath: name) ? name : nil }
        return folders.map { $0 + "/" + name }.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// Probes the libraries not opened yet in a child process (`PluginProbe`): one that crashes, aborts, exits or
    /// hangs there is never opened in graphhost's.
    private func probe(_ paths: [String]) {
        let unknown = opened.withLock { opened in paths.filter { opened[$0] == nil } }
        guard !unknown.isEmpty else { return }
        let failures = PluginProbe.failures(unknown, kind: .ladspaLibraries)
        opened.withLock { opened in
            for (path, reason) in failures {
                opened[path] = .failure(
                    LADSPAError(description: "\(path) left out: loading it failed in a probe process: \(reason)"))
            }
        }
    }

    /// The plugins of the library at `path`, opened once (after a probe).
    public func plugins(inLibrary path: String) -> Result<[LADSPAPlugin], LADSPAError> {
        probe([path])
        return opened.withLock { opened in
            if let known = opened[path] { return known }
            let result: Result<[LADSPAPlugin], LADSPAError>
            if let library = dlopen(path, RTLD_NOW | RTLD_LOCAL) {
                var plugins: [LADSPAPlugin] = []
                var index: UInt = 0
                while let descriptor = gh_ladspa_descriptor(library, index) {
                    plugins.append(LADSPAPlugin(library: path, descriptor: descriptor))
                    index += 1
                }
                result =
                    plugins.isEmpty
                    ? .failure(LADSPAError(description: "\(path) holds no LADSPA plugin (no ladspa_descriptor)"))
                    : .success(plugins)
            } else {
                let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
                result = .failure(LADSPAError(description: "cannot open \(path): \(reason)"))
            }
            opened[path] = result
            return result
        }
    }

    /// Every library file in the search path, by folder and name.
    public var libraries: [String] {
        folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".so") }
                .sorted().map { folder + "/" + $0 }
        }
    }

    /// Every plugin in the search path, by library, and the libraries that could not be read.
    public var all: (plugins: [LADSPAPlugin], failures: [String]) {
        var plugins: [LADSPAPlugin] = []
        var failures: [String] = []
        let libraries = libraries
        probe(libraries)
        for library in libraries {
            switch self.plugins(inLibrary: library) {
            case .success(let found): plugins += found
            case .failure(let error): failures.append(error.description)
            }
        }
        return (plugins, failures)
    }

    /// The plugin with this unique id in the search path.
    public func plugin(id: Int) -> LADSPAPlugin? {
        let libraries = libraries
        probe(libraries)
        for library in libraries {
            if case .success(let found) = plugins(inLibrary: library),
                let plugin = found.first(where: { $0.uniqueID == id })
            {
                return plugin
            }
        }
        return nil
    }
}
