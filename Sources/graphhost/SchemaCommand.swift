import ArgumentParser
import FoundationEssentials
import GraphHost

/// `graphhost schema`: the graph files' JSON schema and the doc's settings tables, generated from the node descriptors.
struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract:
            "Print the graph JSON schema (Graphs/graph.schema.json) or "
            + "the node settings tables of docs/graph-format.md."
    )
    @Flag(help: "Print the node settings tables (Markdown) instead of the schema.") var docTables = false
    @Option(help: "Replace the marked node settings section of this Markdown file with the tables.") var updateDoc:
        String?

    func run() throws {
        if let path = updateDoc {
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
            else {
                throw ValidationError("cannot read \(path)")
            }
            guard let updated = NodeSettingsTables.replacingSection(in: text) else {
                throw ValidationError(
                    "\(path) has no section between \(NodeSettingsTables.startMarker) "
                        + "and \(NodeSettingsTables.endMarker)"
                )
            }
            try Data(updated.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            return
        }
        print(docTables ? NodeSettingsTables.markdown : GraphSchema.text, terminator: "")
    }
}
