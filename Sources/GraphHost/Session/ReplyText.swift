import FoundationEssentials
import Glibc

/// A control reply in words for the console: `help`, `status` and `list` as aligned tables with units and paths
/// shown plainly; an error as `error: ...`; anything else as `LiveControl.describe` shows it.
public enum ReplyText {
    /// The console's answer to `line`: `status --json`, `list --json` and `help --json` give the reply's JSON as the
    /// socket sends it; every other line, the reply in words.
    public static func answer(_ line: String, by handle: (String) -> String) -> String {
        let words = line.split(whereSeparator: \.isWhitespace)
        if words.count >= 2, words.last == "--json", ["status", "list", "help"].contains(words[0]) {
            return handle(words.dropLast().joined(separator: " "))
        }
        return describe(handle(line))
    }

    public static func describe(_ reply: String) -> String {
        guard let object = JSONText.value(reply) as? [String: Any], object["ok"] as? Bool == true else {
            return LiveControl.describe(reply: reply)
        }
        if let help = object["help"] as? [[String: Any]] { return helpText(help) }
        if let status = object["status"] as? [String: Any] { return statusText(status) }
        if let nodes = object["nodes"] as? [[String: Any]] { return listText(nodes, chains: object["chains"] as? [String: Any] ?? [:]) }
        return LiveControl.describe(reply: reply)
    }

    // MARK: help

    /// Every command a line; one command (an entry with its example) as its usage, arguments and example.
    static func helpText(_ entries: [[String: Any]]) -> String {
        if entries.count == 1, let entry = entries.first, let example = entry["example"] as? String {
            let arguments = (entry["arguments"] as? [[String: Any]] ?? []).map { [text($0["name"]), text($0["meaning"])] }
            var lines = ["usage: " + text(entry["synopsis"]), text(entry["summary"])]
            if !arguments.isEmpty { lines += ["", "arguments:"] + table(arguments) }
            lines += ["", "example: " + example]
            return lines.joined(separator: "\n")
        }
        let rows = entries.map { [text($0["synopsis"]), text($0["summary"])] }
        return (["commands:"] + table(rows) + ["help COMMAND shows a command's arguments and an example."]).joined(separator: "\n")
    }

    // MARK: status

    static func statusText(_ status: [String: Any]) -> String {
        let playing = status["playing"] as? Bool ?? false
        let latency = status["latency"] as? [String: Any] ?? [:]
        var lines = [
            (playing ? "playing" : "paused") + " at " + seconds(status["position"])
                + " | quantum \(integer(status["quantum"])) frames"
                + " | latency \(integer(latency["frames"])) frames (" + Format.printf("%.1f", number(latency["milliseconds"])) + " ms)",
            "underruns \(integer(status["underruns"])) | xruns \(integer(status["xruns"])) | overruns \(integer(status["overruns"]))"
                + " | callbacks \(integer(status["callbacks"]))",
        ]
        if let building = status["building"] as? String { lines.append("building a swap to \(building)") }
        let streams = status["streams"] as? [[String: Any]] ?? []
        if !streams.isEmpty {
            lines += ["", "streams:"] + table(header: ["ID", "STATE", "POSITION", "DURATION", "BUFFER", "UNDERRUNS", "LOADED", "SOURCE"],
                                               streams.map(streamRow))
            for stream in streams {
                let title = [stream["artist"], stream["title"]].compactMap { $0 as? String }.joined(separator: " - ")
                let about = [stream["media"] as? String, title.isEmpty ? nil : "♪ " + title].compactMap { $0 }
                if !about.isEmpty { lines.append("  \(text(stream["id"])): " + about.joined(separator: " | ")) }
            }
        }
        let inputs = status["inputs"] as? [[String: Any]] ?? []
        if !inputs.isEmpty {
            lines += ["", "inputs:"] + table(header: ["ID", "STATE", "LEVEL", "DROPOUTS", "TRIMMED"], inputs.map { input in
                [text(input["id"]), input["playing"] as? Bool == true ? "playing" : "waiting",
                 Format.printf("%.1f dBFS", number(input["levelDBFS"])), "\(integer(input["dropouts"]))",
                 "\(integer(input["trimmedFrames"])) frames"]
            })
        }
        let chains = (status["chains"] as? [String: Any] ?? [:]).sorted { $0.key < $1.key }
        if !chains.isEmpty { lines += ["", "chains:"] + table(chains.map { [$0.key, text($0.value)] }) }
        lines += pluginLines(status)
        let mixerDelays = (latency["mixerDelays"] as? [String: Any] ?? [:]).sorted { $0.key < $1.key }
        if !mixerDelays.isEmpty {
            lines += ["", "latency compensation:"] + table(mixerDelays.map { delay in
                [delay.key, "inputs delayed by " + ((delay.value as? [Any]) ?? []).map { "\(integer($0))" }.joined(separator: ", ") + " frames"]
            })
        }
        if let midi = status["midiControl"] as? [String: Any] {
            let mapped = (midi["cc"] as? [Any] ?? []).count + (midi["program"] as? [Any] ?? []).count
            lines += ["", "MIDI control: port \(text(midi["port"])), \(mapped) mapped"
                      + ((midi["learning"] as? String).map { ", learning \($0)" } ?? "")]
        }
        if let recording = status["recording"] as? [String: Any] {
            lines += ["", "recording: \(text(recording["path"])) (\(seconds(recording["seconds"])), "
                      + "\(integer(recording["droppedFrames"])) frames dropped)"]
        }
        if let memory = status["memory"] as? [String: Any] {
            lines.append("")
            lines.append("memory: \(bytes(memory["lockedBytes"])) locked, \(bytes(memory["notLockedBytes"])) not locked")
        }
        return lines.joined(separator: "\n")
    }

    static func streamRow(_ stream: [String: Any]) -> [String] {
        let fill = stream["bufferFill"].map { Format.printf("%.0f %%", 100 * number($0)) } ?? ""
        var loaded = ""
        if let bytesLoaded = stream["bytesLoaded"] {
            loaded = bytes(bytesLoaded) + (stream["totalBytes"].map { " of " + bytes($0) } ?? "")
        }
        return [text(stream["id"]), text(stream["state"]), stream["position"].map(seconds) ?? "",
                stream["duration"].map(seconds) ?? "", fill, "\(integer(stream["underruns"]))", loaded, source(stream["url"])]
    }

    /// LV2 nodes' control outputs, properties, block lengths and silenced slices, a node a line.
    static func pluginLines(_ status: [String: Any]) -> [String] {
        let outputs = status["pluginOutputs"] as? [String: Any] ?? [:]
        let properties = status["pluginProperties"] as? [String: Any] ?? [:]
        let blocks = status["pluginBlockLengths"] as? [String: Any] ?? [:]
        let silenced = status["silencedSlices"] as? [String: Any] ?? [:]
        let ids = Set(outputs.keys).union(properties.keys).union(blocks.keys).union(silenced.keys).sorted()
        guard !ids.isEmpty else { return [] }
        let rows = ids.map { id -> [String] in
            var parts = blocks[id].map { ["block \(integer($0)) frames"] } ?? []
            let values = (outputs[id] as? [String: Any] ?? [:]).sorted { $0.key < $1.key }
            parts += values.map { "\($0.key) \(Format.number(number($0.value)))" }
            parts += (properties[id] as? [String: Any] ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \(text($0.value))" }
            if let count = silenced[id] { parts.append("silenced \(integer(count)) slices") }
            return [id, parts.joined(separator: ", ")]
        }
        return ["", "plugins:"] + table(rows)
    }

    // MARK: list

    static func listText(_ nodes: [[String: Any]], chains: [String: Any]) -> String {
        let rows = nodes.map { node -> [String] in
            let parameters = parameterGroups(node["parameters"] as? [[String: Any]] ?? []).map { group -> String in
                let range = group.minimum == nil && group.maximum == nil ? "" : " " + (group.minimum ?? "") + "…" + (group.maximum ?? "")
                return group.name + range
            }
            var details = parameters.joined(separator: ", ")
            if let chain = node["chain"] as? String {
                details = "chain \(chain) of " + ((node["chains"] as? [Any]) ?? []).map(text).joined(separator: ", ")
            }
            return [text(node["id"]), text(node["type"]), "\((node["presets"] as? [Any] ?? []).count)", details]
        }
        var lines = table(header: ["ID", "TYPE", "PRESETS", "PARAMETERS (RANGE)"], rows)
        // Nodes with the same presets (EQs of one kind) share a line.
        var presets: [(ids: [String], names: [String])] = []
        for node in nodes {
            let names = (node["presets"] as? [Any] ?? []).map(text)
            guard !names.isEmpty else { continue }
            if let same = presets.firstIndex(where: { $0.names == names }) {
                presets[same].ids.append(text(node["id"]))
            } else {
                presets.append(([text(node["id"])], names))
            }
        }
        lines += presets.map { "presets of \($0.ids.joined(separator: ", ")): " + $0.names.joined(separator: ", ") }
        if !chains.isEmpty { lines.append("chains: " + chains.keys.sorted().joined(separator: ", ")) }
        return lines.joined(separator: "\n")
    }

    /// Parameters with their ranges, numbered runs with one range joined: `band.0`…`band.9` as `band.0…9`.
    static func parameterGroups(_ parameters: [[String: Any]]) -> [(name: String, minimum: String?, maximum: String?)] {
        var groups: [(name: String, minimum: String?, maximum: String?, base: String?, last: Int)] = []
        for parameter in parameters {
            let name = text(parameter["name"])
            let minimum = parameter["minimum"].map { Format.number(number($0)) }
            let maximum = parameter["maximum"].map { Format.number(number($0)) }
            let dot = name.lastIndex(of: ".")
            let base = dot.map { String(name[...$0]) }, index = dot.flatMap { Int(name[name.index(after: $0)...]) }
            if let index, let previous = groups.last, previous.base == base, previous.last + 1 == index,
               previous.minimum == minimum, previous.maximum == maximum {
                let first = previous.name.split(separator: "…").first.map(String.init) ?? previous.name
                groups[groups.count - 1].name = first + "…\(index)"
                groups[groups.count - 1].last = index
            } else {
                groups.append((name, minimum, maximum, index == nil ? nil : base, index ?? -2))
            }
        }
        return groups.map { ($0.name, $0.minimum, $0.maximum) }
    }

    // MARK: helpers

    /// Rows with their columns aligned (the last one left as it is), indented by two spaces; a header row first.
    static func table(header: [String]? = nil, _ rows: [[String]]) -> [String] {
        let all = (header.map { [$0] } ?? []) + rows
        let columns = all.map(\.count).max() ?? 0
        let widths = (0..<columns).map { column in all.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        return all.map { row in
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }
            return "  " + String(cells.joined(separator: "  ").reversed().drop { $0 == " " }.reversed())
        }
    }

    static func text(_ value: Any?) -> String {
        switch value {
        case let s as String: return s
        case let n as Double: return Format.number(n)
        case let b as Bool: return b ? "yes" : "no"
        case nil: return ""
        case let other?: return JSONText.line(other)
        }
    }

    /// A media URL; a local file's as its path.
    static func source(_ value: Any?) -> String {
        let url = text(value)
        return url.hasPrefix("file://") ? String(url.dropFirst("file://".count)) : url
    }

    static func number(_ value: Any?) -> Double { value as? Double ?? 0 }
    static func integer(_ value: Any?) -> Int { Int(number(value)) }
    static func seconds(_ value: Any?) -> String { Format.printf("%.2f s", number(value)) }

    /// A byte count in B, kB, MB or GB (powers of 1000).
    static func bytes(_ value: Any?) -> String {
        let count = number(value)
        for (unit, size) in [("GB", 1e9), ("MB", 1e6), ("kB", 1e3)] where count >= size {
            return Format.printf("%.1f ", count / size) + unit
        }
        return "\(Int(count)) B"
    }
}
