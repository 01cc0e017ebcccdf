/// Where a graph's outputs play: the first output's target (nil: the default sink), the further outputs with theirs,
/// and the RTP sinks loaded for outputs sent over the network. Read from a document at start; a `load` that changes
/// it makes the player connect again with the new routing (a gap of a few cycles).
public struct OutputRouting: Equatable, Sendable {
    public struct Output: Equatable, Sendable {
        public var id: String
        public var target: String?
    }

    public var target: String?
    public var extraOutputs: [Output]
    public var rtpSinks: [RTPSinkSpec]

    /// The routing `document` asks for; `target` (`run --target`) overrides its first output's own.
    public init(_ document: GraphDocument, target: String?) {
        let outputs = document.outputIDs.map { Output(id: $0, target: document.node($0)?.definition.outputTarget) }
        self.target = target ?? outputs.first?.target
        extraOutputs = Array(outputs.dropFirst())
        rtpSinks = document.outputIDs.compactMap {
            document.node($0)?.definition.rtpOutput.map {
                RTPSinkSpec(
                    nodeName: $0.sinkNodeName,
                    arguments: $0.sinkArguments(rate: document.format.sampleRate, channels: document.format.channels))
            }
        }
    }
}
