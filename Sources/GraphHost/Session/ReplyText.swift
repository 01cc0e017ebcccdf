import FoundationEssentials
import Glibc

/// A control result in words for the console: `help`, `status` and `list` as aligned tables with units and paths
/// shown plainly; an error as `error: ...`; a change carried out as `ok`.
public enum ReplyText {
    /// The console's answer to `line`: `status --json`, `list --json` and `help --json` give the JSON the socket
    /// sends; every other line, the result in words.
    public static func answer(_ line: String, control: LiveControl) -> String {
        let words = line.split(whereSeparator: \.isWhitespace)
        if words.count >= 2, words.last == "--json", ["status", "list", "help"].contains(words[0]) {
            return control.reply(to: words.dropLast().joined(separator: " "))
        }
        do {
            return describe(try control.perform(Command.parse(line)))
        } catch {
            return "error: \(error)"
        }
    }

    public static func describe(_ result: ControlResult) -> String {
        switch result {
        case .help(let entries, let detailed): return helpText(entries, detailed: detailed)
        case .status(let status): return statusText(status)
        case .listing(let listing): return listText(listing)
        case .done, .quitting: return "ok"
        }
    }

    // MARK: help

    /// Every command a line; one command as its usage, arguments and example.
    static func helpText(_ entries: [CommandHelp], detailed: Bool) -> String {
        if detailed, entries.count == 1, let entry = entries.first {
            let arguments = entry.arguments.map { [$0.name, $0.meaning] }
            var lines = ["usage: " + entry.synopsis, entry.summary]
            if !arguments.isEmpty { lines += ["", "arguments:"] + table(arguments) }
            lines += ["", "example: " + entry.example]
            return lines.joined(separator: "\n")
        }
        let rows = entries.map { [$0.synopsis, $0.summary] }
        return (["commands:"] + table(rows) + ["help COMMAND shows a command's arguments and an example."]).joined(
            separator: "\n")
    }

    // MARK: status

    static func statusText(_ status: RunStatus) -> String {
        let latency = status.latency
        var lines = [
            (status.playing ? "playing" : "paused") + " at " + seconds(status.position)
                + " | quantum \(status.quantum) frames"
                + " | latency \(latency.frames) frames (" + Format.printf("%.1f", latency.milliseconds) + " ms)",
            "underruns \(status.underruns) | xruns \(status.xruns) | overruns "
                + "\(status.overruns) | callbacks \(status.callbacks)",
        ]
        if let building = status.building { lines.append("building a swap to \(building)") }
        if !status.streams.isEmpty {
            lines +=
                ["", "streams:"]
                + table(
                    header: ["ID", "STATE", "POSITION", "DURATION", "BUFFER", "UNDERRUNS", "LOADED", "SOURCE"],
                    status.streams.map(streamRow))
            for stream in status.streams {
                let title = [stream.artist, stream.title].compactMap { $0 }.joined(separator: " - ")
                let about = [stream.media, title.isEmpty ? nil : "♪ " + title].compactMap { $0 }
                if !about.isEmpty { lines.append("  \(stream.id): " + about.joined(separator: " | ")) }
            }
        }
        if !status.inputs.isEmpty {
            lines +=
                ["", "inputs:"]
                + table(
                    header: ["ID", "STATE", "LEVEL", "DROPOUTS", "TRIMMED"],
                    status.inputs.map { input in
                        [
                            input.id, input.playing ? "playing" : "waiting",
                            Format.printf("%.1f dBFS", input.levelDBFS), "\(input.dropouts)",
                            "\(input.trimmedFrames) frames",
                        ]
                    })
        }
        if !status.meters.isEmpty {
            lines +=
                ["", "meters (dBFS):"]
                + table(
                    header: ["NODE", "CHANNEL", "PEAK", "HELD", "RMS", "CLIPS"],
                    status.meters.flatMap { meter in
                        meter.channels.enumerated().map { c, level in
                            [
                                c == 0 ? meter.node : "", "\(c + 1)", RunStatus.Level.text(level.peak),
                                RunStatus.Level.text(level.heldPeak), RunStatus.Level.text(level.rms), "\(level.clips)",
                            ]
                        }
                    })
        }
        if !status.loudness.isEmpty {
            typealias L = RunStatus.Loudness
            lines +=
                ["", "loudness (LUFS, LU, dBTP):"]
                + table(
                    header: ["NODE", "MOMENTARY", "SHORT-TERM", "INTEGRATED", "RANGE", "TRUE PEAK"],
                    status.loudness.map {
                        [
                            $0.node, L.text($0.momentary), L.text($0.shortTerm), L.text($0.integrated),
                            L.text($0.range), L.text($0.truePeak),
                        ]
                    })
        }
        let chains = status.chains.sorted { $0.key < $1.key }
        if !chains.isEmpty { lines += ["", "chains:"] + table(chains.map { [$0.key, $0.value] }) }
        lines += pluginLines(status)
        let mixerDelays = latency.mixerDelays.sorted { $0.key < $1.key }
        if !mixerDelays.isEmpty {
            lines +=
                ["", "latency compensation:"]
                + table(
                    mixerDelays.map { delay in
                        [
                            delay.key,
                            "inputs delayed by " + delay.value.map { "\($0)" }.joined(separator: ", ") + " frames",
                        ]
                    })
        }
        if let midi = status.midiControl {
            let mapped = midi.map.controls.count + midi.map.programs.count
            lines += [
                "",
                "MIDI control: port \(midi.map.port), \(mapped) mapped"
                    + (midi.learning.map { ", learning \($0)" } ?? ""),
            ]
        }
        if let routes = status.routes {
            lines += ["", "routes: \(routes.rules.rules.count) rules, \(routes.moved.count) streams moved"]
            lines += routes.moved.map { "  \($0.application) (node \($0.nodeID)) → \($0.sink)" }
        }
        if let device = status.device {
            let route = device.route.map { " (\($0))" } ?? ""
            lines += [
                "", "output device: \(device.description ?? device.name ?? "none")\(route), graph \(device.graph)",
            ]
        }
        if let recording = status.recording {
            lines += [
                "",
                "recording: \(recording.path) (\(seconds(recording.seconds)), "
                    + "\(recording.droppedFrames) frames dropped)",
            ]
        }
        lines.append("")
        lines.append(
            "memory: \(bytes(status.memory.lockedBytes)) locked, \(bytes(status.memory.notLockedBytes)) not locked")
        lines.append("threads: \(status.threads.count), the workers rendered \(status.threads.workerSteps) steps")
        return lines.joined(separator: "\n")
    }

    static func streamRow(_ stream: RunStatus.Stream) -> [String] {
        let fill = Format.printf("%.0f %%", 100 * stream.bufferFill)
        let loaded = stream.bytesLoaded.map { bytes($0) + (stream.totalBytes.map { " of " + bytes($0) } ?? "") } ?? ""
        return [
            stream.id, stream.state, seconds(stream.position), stream.duration.map(seconds) ?? "", fill,
            "\(stream.underruns)", loaded,
            source(stream.url),
        ]
    }

    /// LV2 nodes' control outputs, properties, block lengths and silenced slices, a node a line.
    static func pluginLines(_ status: RunStatus) -> [String] {
        let (outputs, properties) = (status.pluginOutputs, status.pluginProperties)
        let (blocks, silenced) = (status.pluginBlockLengths, status.silencedSlices)
        let ids = Set(outputs.keys).union(properties.keys).union(blocks.keys).union(silenced.keys).sorted()
        guard !ids.isEmpty else { return [] }
        let rows = ids.map { id -> [String] in
            var parts = blocks[id].map { ["block \($0) frames"] } ?? []
            parts += (outputs[id] ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \(Format.number($0.value))" }
            parts += (properties[id] ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            if let count = silenced[id] { parts.append("silenced \(count) slices") }
            return [id, parts.joined(separator: ", ")]
        }
        return ["", "plugins:"] + table(rows)
    }

    // MARK: list

    static func listText(_ listing: NodeListing) -> String {
        let rows = listing.nodes.map { node -> [String] in
            let parameters = parameterGroups(node.parameters).map { group -> String in
                let range =
                    group.minimum == nil && group.maximum == nil
                    ? "" : " " + (group.minimum ?? "") + "…" + (group.maximum ?? "")
                return group.name + range
            }
            var details = parameters.joined(separator: ", ")
            if let chain = node.chain { details = "chain \(chain.current) of " + chain.all.joined(separator: ", ") }
            return [node.id, node.type, "\(node.presets.count)", details]
        }
        var lines = table(header: ["ID", "TYPE", "PRESETS", "PARAMETERS (RANGE)"], rows)
        // Nodes with the same presets (EQs of one kind) share a line.
        var presets: [(ids: [String], names: [String])] = []
        for node in listing.nodes where !node.presets.isEmpty {
            if let same = presets.firstIndex(where: { $0.names == node.presets }) {
                presets[same].ids.append(node.id)
            } else {
                presets.append(([node.id], node.presets))
            }
        }
        lines += presets.map { "presets of \($0.ids.joined(separator: ", ")): " + $0.names.joined(separator: ", ") }
        if !listing.chains.isEmpty { lines.append("chains: " + listing.chains.keys.sorted().joined(separator: ", ")) }
        return lines.joined(separator: "\n")
    }

    /// Parameters with their ranges, numbered runs with one range joined: `band.0`…`band.9` as `band.0…9`.
    static func parameterGroups(_ parameters: [ParameterDescriptor]) -> [(
        name: String, minimum: String?, maximum: String?
    )] {
        var groups: [(name: String, minimum: String?, maximum: String?, base: String?, last: Int)] = []
        for parameter in parameters {
            let name = parameter.name
            let unit = parameter.unit.isEmpty ? "" : " " + parameter.unit
            let minimum = parameter.minimum.isFinite ? Format.number(parameter.minimum) : nil
            let maximum = parameter.maximum.isFinite ? Format.number(parameter.maximum) + unit : nil
            let dot = parameter.id.field == nil ? name.lastIndex(of: ".") : nil
            let base = dot.map { String(name[...$0]) }
            let index = parameter.id.field == nil ? parameter.id.index : nil
            if let index, let previous = groups.last, previous.base == base, previous.last + 1 == index,
                previous.minimum == minimum, previous.maximum == maximum
            {
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

    /// A media URL; a local file's as its path.
    static func source(_ url: String) -> String {
        url.hasPrefix("file://") ? String(url.dropFirst("file://".count)) : url
    }

    static func seconds(_ value: Double) -> String { Format.printf("%.2f s", value) }

    /// A byte count in B, kB, MB or GB (powers of 1000).
    static func bytes(_ value: Int) -> String {
        let count = Double(value)
        for (unit, size) in [("GB", 1e9), ("MB", 1e6), ("kB", 1e3)] where count >= size {
            return Format.printf("%.1f ", count / size) + unit
        }
        return "\(Int(count)) B"
    }
}
