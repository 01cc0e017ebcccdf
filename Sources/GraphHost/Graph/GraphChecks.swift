/// Checks of the linked graph: every input fed once, events only to event inputs.
extension GraphDocument {
    /// Whether a node's output bus carries events (a `midi` node, a plugin sending MIDI).
    static func sendsEvents(_ node: GraphNode) -> Bool {
        node.definition.traits.contains(.sendsEvents)
    }

    /// Event buses (`midi` nodes and MIDI processors send them) go to event inputs (instruments and MIDI processors
    /// take them on their input bus, other plugins with a MIDI input on a bus of its own), and nothing else does.
    static func checkEventLinks(nodes: [GraphNode], links: [GraphLink], issues: inout GraphIssues) {
        for (i, link) in links.enumerated() {
            let source = nodes[link.from]
            let target = nodes[link.to]
            let fromEvents = sendsEvents(source)
            let toEvents = target.definition.carriesEvents(bus: link.toBus)
            let input = link.toPort.map { "'\(target.id):\($0)'" } ?? "'\(target.id)'"
            if fromEvents && !toEvents {
                issues.report(
                    "links[\(i)]",
                    "'\(source.id)' sends MIDI events: link it to an instrument, a MIDI processor or "
                        + "a plugin's MIDI input (an lv2 plugin with a MIDI input), not to \(input)"
                )
            } else if toEvents && !fromEvents {
                issues.report(
                    "links[\(i)]",
                    "\(input) takes MIDI events (a midi node's or a MIDI processor's), not the audio of '\(source.id)'")
            }
        }
    }

    static func checkInputs(nodes: [GraphNode], links: [GraphLink], issues: inout GraphIssues) {
        for node in nodes {
            for bus in 0..<node.definition.inputBuses {
                let feeding = links.indices.filter { links[$0].to == node.index && links[$0].toBus == bus }
                if feeding.count > 1 {
                    let list = feeding.map { "links[\($0)]" }.joined(separator: ", ")
                    issues.report(
                        node.path,
                        "input '\(node.id):\(bus)' is connected \(feeding.count) "
                            + "times (\(list)); feed a mixer to combine signals"
                    )
                } else if feeding.isEmpty && !node.definition.traits.contains(.mixesInputs)
                    && !(bus == 0 && node.definition.traits.contains(.isSource))
                {
                    issues.report(node.path, "input '\(node.id):\(bus)' is not connected")
                }
            }
        }
    }
}
