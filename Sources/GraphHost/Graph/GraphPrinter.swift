import FoundationEssentials
import Glibc

/// Text and Graphviz renderings of a graph, for `graphhost show`.
public enum GraphPrinter {
    static func typeName(_ node: GraphNode) -> String { node.definition.typeName }

    static func endpoint(_ doc: GraphDocument, _ node: Int, _ bus: Int) -> String {
        "\(doc.nodes[node].id):\(bus)"
    }

    public static func text(_ doc: GraphDocument) -> String {
        let f = doc.format
        var out = "graph \(doc.displayName)\n"
        out +=
            "format: \(f.sampleRate) Hz, \(f.channels) channels, planar "
            + "Float32, up to \(f.maxFrames) frames per slice\n"
        out += "nodes:\n"
        for node in doc.nodes {
            let d = node.definition
            out += "  \(node.id) (\(typeName(node))) in \(d.inputBuses) out \(d.outputBuses)"
            let settings = d.summary.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
            out += settings.isEmpty ? "\n" : "  \(settings)\n"
            let parameters = d.descriptor.parameters
            if !parameters.isEmpty {
                out += "    parameters: " + parameters.map(\.summary).joined(separator: ", ") + "\n"
            }
        }
        out += "links:\n"
        for l in doc.links {
            let target = l.toPort.map { "\(doc.nodes[l.to].id):\($0)" } ?? endpoint(doc, l.to, l.toBus)
            let source = l.fromPort.map { "\(doc.nodes[l.from].id):\($0)" } ?? endpoint(doc, l.from, l.fromBus)
            out += "  \(source) -> \(target)\n"
        }
        out += "render order: " + doc.order.map { doc.nodes[$0].id }.joined(separator: " -> ") + "\n"
        if !doc.chains.isEmpty {
            out += "chains (swap with `chain NODE NAME`; crossfade \(Format.number(doc.crossfadeSeconds * 1000)) ms):\n"
            for name in doc.chains.keys.sorted() {
                out += "  \(name): " + doc.chains[name]!.joined(separator: " -> ") + "\n"
            }
            for p in doc.chainNodes { out += "  node \(p.id) runs \(p.chain)\n" }
        }
        return out
    }

    public static func dot(_ doc: GraphDocument) -> String {
        func quote(_ s: String) -> String {
            "\"" + s.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
        }
        var out = "digraph graphhost {\n  rankdir=LR;\n  node [shape=box];\n"
        for node in doc.nodes {
            let lines = ["\(node.id) (\(typeName(node)))"] + node.definition.summary.map { "\($0.0)=\($0.1)" }
            out += "  \(quote(node.id)) [label=\(quote(lines.joined(separator: "\n")))];\n"
        }
        for l in doc.links {
            let label = "\(l.fromPort ?? String(l.fromBus))→\(l.toPort ?? String(l.toBus))"
            out += "  \(quote(doc.nodes[l.from].id)) -> \(quote(doc.nodes[l.to].id)) [label=\(quote(label))];\n"
        }
        return out + "}\n"
    }
}
