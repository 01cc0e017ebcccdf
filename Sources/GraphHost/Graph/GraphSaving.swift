import FoundationEssentials
import Glibc

extension GraphDocument {
    /// The graph as a file that plays what is heard now: the source JSON with each node's live settings, each chain
    /// node's selected chain and the transport written in. Saved into another folder than the graph's, it gets a
    /// `baseDirectory` so relative media paths still resolve.
    public func savedJSON(folder: URL) -> JSONValue {
        guard var saved = root else { return JSONValue(.object([])) }
        for node in nodes {
            saved = saved.updating(path: node.path) { object in
                let live = node.definition.liveSettings.reduce(object) { $0.setting($1.key, $1.value) }
                // An output node is metered whatever it says; another says so only when it is.
                return node.definition.traits.contains(.isOutput)
                    ? live : live.setting("meter", node.meter ? .bool(true) : nil)
            }
        }
        for (i, item) in (saved["nodes"]?.arrayValue ?? []).enumerated() {
            guard let id = item["id"]?.stringValue, let placement = chainNodes.first(where: { $0.id == id }) else {
                continue
            }
            saved = saved.updating(path: "nodes[\(i)]") { $0.setting("chain", .string(placement.chain)) }
        }
        if let time = musicalTime {
            saved = saved.setting(
                "transport",
                .object([
                    ("bpm", .number(time.beatsPerMinute)), ("beatsPerBar", .number(time.beatsPerBar)),
                    ("beatUnit", .number(Double(time.beatUnit))), ("rolling", .bool(time.rolling)),
                ]))
        }
        saved = saved.setting("midiControl", midiControl?.json)
        let base =
            saved["baseDirectory"] == nil
            ? file.deletingLastPathComponent().standardizedFileURL
            : URL(
                fileURLWithPath: saved["baseDirectory"]!.stringValue ?? "", relativeTo: file.deletingLastPathComponent()
            ).standardizedFileURL
        if base.path != folder.standardizedFileURL.path || saved["baseDirectory"] != nil {
            saved = saved.setting(
                "baseDirectory", base.path == folder.standardizedFileURL.path ? nil : .string(base.path))
        }
        return saved
    }

    /// Writes `savedJSON` to `path` (atomically: a failed write leaves an existing file as it was).
    public func save(to path: String) throws {
        let url = URL(fileURLWithPath: path)
        try Self.checkWritable(path)
        let text = savedJSON(folder: url.deletingLastPathComponent()).text() + "\n"
        do {
            try Data(text.utf8).write(to: url, options: .atomic)
        } catch {
            throw GraphChangeError.cannotSave("cannot write \(path): \(error)")
        }
    }

    /// Throws the reason when a graph file cannot be written at `path` (no folder, not a .json name).
    public static func checkWritable(_ path: String) throws {
        let url = URL(fileURLWithPath: path)
        guard url.pathExtension == "json" else {
            throw GraphChangeError.cannotSave("save: '\(path)' is not a .json file name")
        }
        let folder = url.deletingLastPathComponent().path
        guard isDirectory(folder) else {
            throw GraphChangeError.cannotSave("save: the folder \(folder) does not exist")
        }
        guard FileManager.default.isWritableFile(atPath: folder) else {
            throw GraphChangeError.cannotSave("save: the folder \(folder) is not writable")
        }
    }
}
