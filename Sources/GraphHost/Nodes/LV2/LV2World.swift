import CLV2
import CLilv
import FoundationEssentials
import Glibc
import Logging
import Synchronization

/// The process's one lilv world, loaded once: LV2_PATH (or lilv's default path, `defaultPath`) plus the repository's
/// Plugins/ folder, without the bundles whose dynamic manifest failed in a probe process (`LV2Bundles`). lilv is not
/// thread-safe, so the world is reachable only through `withWorld`, one thread at a time. Everything here is control
/// world.
public final class LV2World: Sendable {
    public static let shared = LV2World()

    /// Held while lilv runs; `world` is read only under it (in `withWorld`).
    private let lilvLock = Mutex(())
    nonisolated(unsafe) private let world: OpaquePointer
    /// The LV2 path that was searched.
    public let searchPath: String
    /// Bundles left out because loading them failed in a probe process, with why.
    public let skippedBundles: [(bundle: String, reason: String)]

    /// lilv's own default path on Debian: the user's folder, the multiarch folder, then the others.
    public static var defaultPath: String {
        "~/.lv2:/usr/lib/\(Multiarch.triplet)/lv2:/usr/lib/lv2:/usr/local/lib/lv2"
    }

    private init() {
        let world = lilv_world_new()!
        let env = ProcessInfo.processInfo.environment
        var parts = (env["LV2_PATH"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultPath)
            .split(separator: ":").map(String.init)
        if let plugins = Self.repositoryPlugins(), !parts.contains(plugins) { parts.append(plugins) }
        searchPath = parts.joined(separator: ":")
        let node = lilv_new_string(world, searchPath)
        lilv_world_set_option(world, LILV_OPTION_LV2_PATH, node)
        lilv_node_free(node)
        // What lilv_world_load_all does, bundle by bundle, without the ones that failed in the probe.
        let bundles = LV2Bundles(folders: parts)
        for bundle in bundles.loadable {
            let uri = lilv_new_uri(world, URL(fileURLWithPath: bundle, isDirectory: true).absoluteString)
            lilv_world_load_bundle(world, uri)
            lilv_node_free(uri)
        }
        lilv_world_load_specifications(world)
        lilv_world_load_plugin_classes(world)
        skippedBundles = bundles.skipped
        for (bundle, reason) in skippedBundles {
            Self.logger.warning("LV2 bundle \(bundle) left out: loading it failed in a probe process: \(reason)")
        }
        self.world = world
    }

    private static let logger = Logger(label: "graphhost.lv2")

    /// Runs `body` with the lilv world while no other thread uses lilv.
    func withWorld<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R {
        try lilvLock.withLock { _ in try body(world) }
    }

    /// The Plugins/ folder of the repository this executable was built in, or of the current directory.
    static func repositoryPlugins() -> String? {
        var candidates: [URL] = [URL(fileURLWithPath: FileManager.default.currentDirectoryPath)]
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            candidates.append(dir)
            dir = dir.deletingLastPathComponent()
        }
        for c in candidates {
            let plugins = c.appendingPathComponent("Plugins")
            if FileManager.default.fileExists(atPath: c.appendingPathComponent("Package.swift").path),
                FileManager.default.fileExists(atPath: plugins.path)
            {
                return plugins.path
            }
        }
        return nil
    }

    /// Loads one more bundle (a folder holding manifest.ttl), e.g. a test fixture.
    public func loadBundle(_ path: String) {
        let url = URL(fileURLWithPath: path, isDirectory: true).absoluteString
        withWorld { world in
            let node = lilv_new_uri(world, url.hasSuffix("/") ? url : url + "/")
            lilv_world_load_bundle(world, node)
            lilv_node_free(node)
        }
    }

    /// All plugins, sorted by URI.
    public var plugins: [LV2PluginInfo] {
        withWorld { world in
            var result: [LV2PluginInfo] = []
            let all = lilv_world_get_all_plugins(world)
            var i = lilv_plugins_begin(all)
            while !lilv_plugins_is_end(all, i) {
                if let p = lilv_plugins_get(all, i) { result.append(LV2PluginInfo(world: world, plugin: p)) }
                i = lilv_plugins_next(all, i)
            }
            return result.sorted { $0.uri < $1.uri }
        }
    }

    /// The plugin with this URI; nil if there is none (or the text is not a URI lilv accepts).
    public func plugin(_ uriText: String) -> LV2PluginInfo? {
        withPlugin(uriText) { world, plugin in LV2PluginInfo(world: world, plugin: plugin) }
    }

    /// Runs `body` with the world and the plugin with this URI; nil if it is not installed.
    func withPlugin<R>(_ uri: String, _ body: (_ world: OpaquePointer, _ plugin: OpaquePointer) throws -> R) rethrows
        -> R?
    {
        try withWorld { world in
            guard let node = lilv_new_uri(world, uri) else { return nil }
            defer { lilv_node_free(node) }
            guard let plugin = lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world), node) else { return nil }
            return try body(world, plugin)
        }
    }

    /// Reads the state a URI describes (a preset or a plugin's default state); nil if there is none.
    /// A state holding one property, `key` = `path` (atom:Path), for `plugin`.
    func withPathState<R>(plugin: String, key: String, path: String, _ body: (OpaquePointer) throws -> R) rethrows -> R?
    {
        func literal(_ text: String) -> String {
            "\"" + text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
        }
        let atomPath = "<http://lv2plug.in/ns/ext/atom#Path>"
        let turtle = """
            <urn:graphhost:property-state> a <http://lv2plug.in/ns/ext/presets#Preset> ;
                <http://lv2plug.in/ns/lv2core#appliesTo> <\(plugin)> ;
                <http://lv2plug.in/ns/ext/state#state> [ <\(key)> \(literal(path))^^\(atomPath) ] .
            """
        return try withWorld { world in
            guard let state = lilv_state_new_from_string(world, URIDMap.shared.mapFeature, turtle) else { return nil }
            defer { lilv_state_free(state) }
            return try body(state)
        }
    }

    func withState<R>(_ uri: String, _ body: (OpaquePointer) throws -> R) rethrows -> R? {
        try withWorld { world in
            let node = lilv_new_uri(world, uri)
            defer { lilv_node_free(node) }
            lilv_world_load_resource(world, node)
            guard let state = lilv_state_new_from_world(world, URIDMap.shared.mapFeature, node) else { return nil }
            defer { lilv_state_free(state) }
            return try body(state)
        }
    }
}

/// Reads a lilv node as text (nil for NULL).
func lilvString(_ node: OpaquePointer?) -> String? {
    guard let node else { return nil }
    if lilv_node_is_uri(node) { return String(cString: lilv_node_as_uri(node)) }
    if lilv_node_is_string(node) || lilv_node_is_literal(node) { return String(cString: lilv_node_as_string(node)) }
    if lilv_node_is_float(node) || lilv_node_is_int(node) { return String(lilv_node_as_float(node)) }
    return String(cString: lilv_node_as_string(node))
}

/// Visits the nodes of a lilv node collection.
func forEachNode(_ nodes: UnsafeMutableRawPointer?, _ body: (OpaquePointer) -> Void) {
    guard let nodes else { return }
    var i = lilv_nodes_begin(nodes)
    while !lilv_nodes_is_end(nodes, i) {
        if let n = lilv_nodes_get(nodes, i) { body(n) }
        i = lilv_nodes_next(nodes, i)
    }
}
