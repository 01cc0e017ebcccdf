/// Why a request about the graph as a whole cannot be carried out (a node or chain it names, a file it reads or
/// writes); the description says what is wrong and what there is.
public enum GraphChangeError: Error, CustomStringConvertible, Sendable, Equatable {
    /// No node `node`; `known` lists the graph's node ids.
    case unknownNode(String, known: [String])
    /// `node` is not a chain node; `chainNodes` lists those there are.
    case notAChainNode(String, chainNodes: [String])
    /// No chain `name`; `known` lists the graph's chains.
    case unknownChain(String, known: [String])
    /// `render --input NODE=FILE` cannot feed `node` from `file`, for `reason`.
    case inputFile(node: String, file: String, reason: String)
    /// The graph cannot be saved, with the reason.
    case cannotSave(String)

    public var description: String {
        switch self {
        case .unknownNode(let node, let known): return "no node '\(node)'; nodes: \(known.joined(separator: ", "))"
        case .notAChainNode(let node, let chainNodes):
            return
                "'\(node)' is not a chain node; chain nodes: "
                + "\(chainNodes.isEmpty ? "none" : chainNodes.joined(separator: ", "))"
        case .unknownChain(let name, let known): return "no chain '\(name)'; chains: \(known.joined(separator: ", "))"
        case .inputFile(let node, let file, let reason): return "--input \(node)=\(file): \(reason)"
        case .cannotSave(let reason): return reason
        }
    }
}
