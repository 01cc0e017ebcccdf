import FoundationEssentials
import Glibc

/// What a node definition sees while it is read: the graph format and the graph file's folder.
public struct NodeContext {
    public var format: GraphFormat
    public var baseDirectory: URL
}

/// One kind of graph node: its JSON settings, its buses, and how it becomes a running instance.
/// Every kind is listed once, in `NodeKinds.all`.
public protocol NodeDefinition: Sendable {
    /// The `type` string in graph files.
    static var typeName: String { get }
    /// The JSON keys a node of this kind accepts besides `id` and `type`.
    static var settingKeys: [String] { get }
    /// Reads and checks the settings; reports problems with their JSON paths and returns nil if any.
    static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> Self?

    var inputBuses: Int { get }
    var outputBuses: Int { get }
    /// `key=value` pairs for `graphhost show`.
    var summary: [(String, String)] { get }
    /// Builds the control-side instance that owns the render kernel (control world; may throw).
    func instantiate(id: String, format: GraphFormat) throws -> NodeInstance
    /// The live commands that turn a running instance of `old` into one of this definition (a swap keeps it),
    /// or nil when the node must be built anew.
    func liveChanges(from old: any NodeDefinition) -> [NodeCommand]?
    /// This definition once `command` has been carried out on its running instance: the live graph keeps its
    /// definitions current, so `save` writes what is heard and a reload diffs against it.
    func applying(_ command: NodeCommand) -> any NodeDefinition
    /// The settings live commands change, as `save` writes them into the node's JSON object (nil: the key is left
    /// out, its default applies).
    var liveSettings: [(key: String, value: JSONValue?)] { get }
    /// Commands a new instance gets before it renders, for settings its kernel does not start with (bypass).
    var initialCommands: [NodeCommand] { get }
    /// The parameters `set` takes, with their ranges (checked before anything runs: MIDI control maps).
    var parameters: [ParameterInfo] { get }
    /// A parameter's value as it plays (the definition follows live commands), nil for none.
    func value(of parameter: String) -> Double?
}

extension NodeDefinition {
    /// The `type` string of this node's kind.
    public var typeName: String { Self.typeName }

    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? { nil }
    public func applying(_ command: NodeCommand) -> any NodeDefinition { self }
    public var liveSettings: [(key: String, value: JSONValue?)] { [] }
    public var initialCommands: [NodeCommand] { [] }
    public var parameters: [ParameterInfo] { [] }
    public func value(of parameter: String) -> Double? { nil }

    static func parseDefinition(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> (any NodeDefinition)? {
        parse(settings, context: context, issues: &issues)
    }
}

/// A parameter a node accepts in `set`, with its range.
public struct ParameterInfo: Sendable {
    public var name: String
    public var minimum: Double
    public var maximum: Double
}

/// The control-side half of a running node: owns its kernel's memory and turns commands into render messages.
public protocol NodeInstance: AnyObject {
    var kernel: RenderStep.Kernel { get }
    /// Throws an error that says what does not fit if `command` cannot apply; changes nothing.
    func check(_ command: NodeCommand) throws
    /// Messages for `command` (the instance records the new state); nothing changes on error.
    func messages(for command: NodeCommand) throws -> [ControlMessage]
    /// Carries a command out by sending messages; `concurrent` says whether a render thread runs meanwhile.
    func perform(_ command: NodeCommand, concurrent: Bool, send: (ControlMessage) throws -> Void) throws
    /// Starts background work (e.g. a decoder thread).
    func start()
    /// Parameters for `set`, with ranges (for `list`).
    var parameters: [ParameterInfo] { get }
    /// Preset names for `preset` (for `list`).
    var presetNames: [String] { get }
    /// The frames by which the node delays what passes through it (a plugin's reported latency).
    var latency: Int { get }
    /// True when the node may start to sound after a silence with nothing new at its inputs (a MIDI file playing, a
    /// plugin without audio inputs): a run whose streams ended must then keep rendering.
    var mayMakeSoundUnprompted: Bool { get }
    /// Stops background work and frees everything; the render world must no longer use the kernel.
    func close()
}

extension NodeInstance {
    public func start() {}
    public var parameters: [ParameterInfo] { [] }
    public var presetNames: [String] { [] }
    public var latency: Int { 0 }
    public var mayMakeSoundUnprompted: Bool { false }

    public func perform(_ command: NodeCommand, concurrent: Bool, send: (ControlMessage) throws -> Void) throws {
        try messages(for: command).forEach(send)
    }
}

/// The registry of node kinds.
public enum NodeKinds {
    public static let all: [any NodeDefinition.Type] = [
        StreamNode.self, CaptureNode.self, SinkNode.self, MixerNode.self, IPodEQNode.self, PEQNode.self, LV2Node.self, MIDINode.self, OutputNode.self,
    ]

    public static func named(_ type: String) -> (any NodeDefinition.Type)? {
        all.first { $0.typeName == type }
    }
}
