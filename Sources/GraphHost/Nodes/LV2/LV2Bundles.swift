import FoundationEssentials
import Glibc

/// The LV2 bundles of a search path as lilv finds them (every folder in a path folder that holds a manifest.ttl), and
/// the ones lilv must not load in graphhost's process: those whose dynamic manifest failed in `PluginProbe`. The
/// probe's verdicts are kept in a cache file (`$XDG_CACHE_HOME/graphhost/lv2-probe.json`, or under `~/.cache`) with
/// a stamp of each bundle's files, so a bundle is probed again only when it changes. Control world.
struct LV2Bundles {
    /// Bundle folders, ending in "/", in search-path order (and by name within a folder).
    var all: [String] = []
    /// The bundles left out, with why.
    var skipped: [(bundle: String, reason: String)] = []

    static let dynamicManifest = "http://lv2plug.in/ns/ext/dynmanifest#"

    /// Lists the bundles of `folders` (a leading "~" is the home folder, as lilv reads it: `PluginProbe.folders`) and
    /// probes those with a dynamic manifest that the cache at `cache` has no verdict for.
    init(folders: [String], cache: String? = LV2Bundles.cachePath) {
        for path in PluginProbe.folders(folders.joined(separator: ":")) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path))?.sorted() ?? []
            for name in names {
                let bundle = URL(fileURLWithPath: path).appendingPathComponent(name).path + "/"
                if FileManager.default.fileExists(atPath: bundle + "manifest.ttl") { all.append(bundle) }
            }
        }
        let risky = all.filter { bundle in
            (try? String(contentsOfFile: bundle + "manifest.ttl", encoding: .utf8))?.contains(Self.dynamicManifest)
                ?? false
        }
        guard !risky.isEmpty else { return }
        let known = cache.map(Self.readCache) ?? [:]
        var verdicts: [String: Verdict] = [:]
        var unknown: [String] = []
        for bundle in risky {
            let stamp = Self.stamp(bundle)
            if let verdict = known[bundle], verdict.stamp == stamp {
                verdicts[bundle] = verdict
            } else {
                verdicts[bundle] = Verdict(stamp: stamp, failure: nil)
                unknown.append(bundle)
            }
        }
        for (bundle, reason) in PluginProbe.failures(unknown, kind: .lv2Bundles) { verdicts[bundle]?.failure = reason }
        if let cache, !unknown.isEmpty { Self.writeCache(known.merging(verdicts) { $1 }, to: cache) }
        skipped = risky.compactMap { bundle in verdicts[bundle]?.failure.map { (bundle, $0) } }
    }

    /// The bundles to load.
    var loadable: [String] {
        let left = Set(skipped.map(\.bundle))
        return all.filter { !left.contains($0) }
    }

    struct Verdict {
        var stamp: String
        var failure: String?
    }

    static var cachePath: String? {
        let env = ProcessInfo.processInfo.environment
        guard let base = env["XDG_CACHE_HOME"].flatMap({ $0.isEmpty ? nil : $0 }) ?? env["HOME"].map({ $0 + "/.cache" })
        else { return nil }
        return base + "/graphhost/lv2-probe.json"
    }

    /// The names, sizes and modification times of a bundle's files.
    static func stamp(_ bundle: String) -> String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: bundle))?.sorted() ?? []
        return names.map { name in
            var info = stat()
            guard stat(bundle + name, &info) == 0 else { return name }
            return "\(name):\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
        }.joined(separator: "/")
    }

    static func readCache(_ path: String) -> [String: Verdict] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let members = (try? JSONParser.parse(text))?["bundles"]?.objectMembers
        else { return [:] }
        var verdicts: [String: Verdict] = [:]
        for (bundle, value) in members {
            guard let stamp = value["stamp"]?.stringValue else { continue }
            verdicts[bundle] = Verdict(stamp: stamp, failure: value["failure"]?.stringValue)
        }
        return verdicts
    }

    /// Writes the verdicts (a cache that cannot be written is left as it is: the bundles are probed again next time).
    static func writeCache(_ verdicts: [String: Verdict], to path: String) {
        let bundles = verdicts.sorted { $0.key < $1.key }.map { bundle, verdict -> (String, JSONValue) in
            (bundle, .members([("stamp", .string(verdict.stamp)), ("failure", verdict.failure.map(JSONValue.string))]))
        }
        let text = JSONValue.object([("bundles", .object(bundles))]).indented() + "\n"
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try? text.write(toFile: path, atomically: true, encoding: .utf8)
    }
}
