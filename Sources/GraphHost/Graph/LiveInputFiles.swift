import FoundationEssentials
import Glibc

extension GraphDocument {
    /// The graph with its `capture` and `sink` nodes fed from files (`render --input NODE=FILE`): each named node plays
    /// its file as a stream would. Throws naming the node or file that cannot be used.
    public func feeding(_ inputs: [(node: String, file: String)]) throws -> GraphDocument {
        var document = self
        for (id, file) in inputs {
            guard let node = document.node(id) else {
                throw GraphChangeError.inputFile(
                    node: id, file: file, reason: GraphChangeError.unknownNode(id, known: nodes.map(\.id)).description)
            }
            guard node.definition.traits.contains(.isLiveInput) else {
                throw GraphChangeError.inputFile(
                    node: id, file: file,
                    reason:
                        "'\(id)' is a \(node.definition.typeName) node; only capture and sink nodes take an input file")
            }
            let path = URL(fileURLWithPath: file).standardizedFileURL.path
            do {
                let media = try MediaProbe.probe(path: path)
                document.nodes[node.index].definition = StreamNode(
                    url: path, path: path, isRemote: false, cachePath: nil, loop: false,
                    bufferSeconds: 0, retrySeconds: 0, media: media)
            } catch {
                throw GraphChangeError.inputFile(node: id, file: file, reason: "\(error)")
            }
        }
        return document
    }
}
