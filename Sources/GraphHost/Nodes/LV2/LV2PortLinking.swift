import FoundationEssentials

extension LV2Node {
    /// Links ports by name. On "to", input ports that are not the node's main inputs (sidechains, extra inputs, CV, the
    /// MIDI input of a plugin with audio inputs): each gets an input bus of its own, reading the source's channel i for
    /// the i-th port (or `"channel"`, or the channels' average for a single port). On "from", output ports: together
    /// they make one output bus of the node (channel i is the i-th port; a single port fills every channel), shared by
    /// every link naming the same ports.
    // Swift 6.3.1 crashes optimizing this function (CopyPropagation, "Found ownership error"); it runs once per link.
    @_optimize(none)
    public mutating func linkPorts(_ symbols: [String], end: LinkEnd, issues: inout GraphIssues) -> [Int]? {
        let (s, key, text, id, input) = (end.settings, end.key, end.text, end.nodeID, end.isInput)
        let main = Set(mainInputs)
        let eventInputs =
            input && plugin.eventInputBesideAudio != nil
            ? plugin.ports.filter { $0.kind == .atom && $0.isInput && $0.supportsMIDI } : []
        let candidates =
            plugin.ports.filter {
                ($0.kind == .audio || $0.kind == .cv) && $0.isInput == input && !(input && main.contains($0.index))
            } + eventInputs
        var ports: [LV2Port] = []
        for symbol in symbols {
            guard let port = candidates.first(where: { $0.symbol == symbol }) else {
                let known = candidates.map(\.symbol)
                let why =
                    input && plugin.ports.contains { $0.symbol == symbol && main.contains($0.index) }
                    ? "'\(symbol)' is one of its main inputs, which link to '\(id)' itself"
                    : "it has no such \(input ? "input" : "output") port"
                issues.report(
                    s.path(key),
                    "'\(text)': \(why); ports to link by name: "
                        + "\(known.isEmpty ? "none" : known.joined(separator: ", "))",
                    at: s.object[key])
                return nil
            }
            guard !ports.contains(where: { $0.index == port.index }) else {
                issues.report(s.path(key), "'\(text)' names '\(symbol)' twice", at: s.object[key])
                return nil
            }
            ports.append(port)
        }
        if let events = ports.first(where: { $0.kind == .atom }) {
            guard ports.count == 1, s.object["channel"] == nil else {
                issues.report(
                    s.path(key),
                    "'\(text)': the MIDI input '\(events.symbol)' takes a link of its own, without \"channel\"",
                    at: s.object[key])
                return nil
            }
            if let linked = portInputs.first(where: \.carriesEvents) {
                issues.report(
                    s.path(key),
                    "'\(id)' takes events on one MIDI input and '\(linked.symbol)' is "
                        + "linked already; a midi node or a MIDI processor feeds one plugin",
                    at: s.object[key])
                return nil
            }
            portInputs.append(
                LV2Node.PortInput(port: events.index, symbol: events.symbol, channel: nil, carriesEvents: true))
            return [portInputs.count]
        }
        guard copies == 1 else {
            issues.report(
                s.path(key),
                "'\(text)': ports can be linked by name only on a plugin that runs once, not once per channel",
                at: s.object[key])
            return nil
        }
        if !input {
            let output = LV2Node.PortOutput(ports: ports.map(\.index), symbols: symbols)
            if let k = portOutputs.firstIndex(of: output) { return [k + 1] }
            portOutputs.append(output)
            return [portOutputs.count]
        }
        var channel: Int?
        if let value = s.object["channel"] {
            guard let c = value.numberValue.map(Int.init), Double(c) == value.numberValue, c >= 0 else {
                issues.report(
                    s.path("channel"), "expected a channel number (0 is the first), found \(value.typeName)", at: value)
                return nil
            }
            guard ports.count == 1 else {
                issues.report(
                    s.path("channel"),
                    "\"channel\" picks the source channel for a link to one port; '\(text)' "
                        + "names \(ports.count), which read channels 0…\(ports.count - 1)",
                    at: value)
                return nil
            }
            channel = c
        }
        var buses: [Int] = []
        for (i, port) in ports.enumerated() {
            guard !portInputs.contains(where: { $0.port == port.index }) else {
                issues.report(
                    s.path(key), "'\(id):\(port.symbol)' is linked more than once; feed a mixer to combine signals",
                    at: s.object[key])
                return nil
            }
            portInputs.append(
                LV2Node.PortInput(port: port.index, symbol: port.symbol, channel: ports.count > 1 ? i : channel))
            buses.append(portInputs.count)
        }
        return buses
    }

    /// The audio inputs of a plugin run once that no link feeds: they read silence.
    public func unlinkedInputWarnings(id: String) -> [String] {
        let linked = Set(portInputs.map(\.port) + mainInputs)
        return plugin.ports.filter { $0.kind == .audio && $0.isInput && !linked.contains($0.index) && copies == 1 }.map
        { port in
            let what = port.isSideChain ? "sidechain input" : "audio input"
            return
                "\(what) '\(port.symbol)' of '\(id)' is not linked and reads "
                + "silence (link it with \"to\": \"\(id):\(port.symbol)\")"
        }
    }
}

/// The ports an LV2 node links by name, as its isolated plugin's helper process takes them (`plugin-host --links`):
/// the helper hosts the node without the graph's links, and must make the same buses.
struct LV2PortLinks: Codable {
    var inputs: [LV2Node.PortInput]
    var outputs: [LV2Node.PortOutput]

    init(_ node: LV2Node) {
        inputs = node.portInputs
        outputs = node.portOutputs
    }

    init(json: String) throws {
        self = try JSONDecoder().decode(Self.self, from: Data(json.utf8))
    }

    var json: String { String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self) }
}

extension LV2Node {
    /// Takes the links the host made (the helper's node), checking that they name this plugin's ports.
    mutating func take(_ links: LV2PortLinks) throws {
        let ports = Set(plugin.ports.map(\.index))
        guard (links.inputs.map(\.port) + links.outputs.flatMap(\.ports)).allSatisfy(ports.contains) else {
            throw PluginIsolationError.refused("the linked ports are not ports of \(uri)")
        }
        portInputs = links.inputs
        portOutputs = links.outputs
    }
}
