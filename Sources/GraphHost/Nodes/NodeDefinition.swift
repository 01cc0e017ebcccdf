import FoundationEssentials
import Glibc

/// What a node definition sees while it is read: the graph format, the graph file's folder, and which files the
/// graph may name (`FileAccess`: every file path it names passes `files.confine`).
public struct NodeContext {
    public var format: GraphFormat
    public var baseDirectory: URL
    public var files: FileAccess = .owner
}

/// One kind of graph node: its descriptor, JSON settings, buses, and how it becomes a running instance.
/// Every kind is listed once, in `NodeKinds.all`.
public protocol NodeDefinition: Sendable {
    /// The `type` string in graph files.
    static var typeName: String { get }
    /// What the kind says of itself: ports, parameters, traits and settings (the schema and doc tables come from it).
    static var descriptor: NodeDescriptor { get }
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
    /// This node's descriptor: the kind's, with the parameters, presets and ports its settings give it.
    var descriptor: NodeDescriptor { get }
    /// A parameter's value as it plays (the definition follows live commands), nil for none.
    func value(of parameter: ParameterID) -> Double?
    /// The preset it plays, if it names one.
    var presetName: String? { get }
    /// Whether `preset NODE name` names one of its presets.
    func hasPreset(_ name: String) -> Bool
    /// Whether input bus `bus` carries events (switched on a swap, never crossfaded) rather than audio.
    func carriesEvents(bus: Int) -> Bool
    /// The input that events linked to the node without a port name go to, when it is not its main input (a MIDI gate).
    var mainEventInput: String? { get }
    /// The PipeWire MIDI input it opens when running, by name.
    var midiInputPort: String? { get }
    /// Where an output node plays (a node.name or object.serial), nil for the default.
    var outputTarget: String? { get }
    /// The RTP session an output node is sent as; nil for every other kind and output.
    var rtpOutput: RTPSession? { get }
    /// A virtual sink's PipeWire node.name in a run named `graphName` (routes move applications into it); nil for
    /// every other kind.
    func virtualSinkName(id: String, graphName: String) -> String?
    /// Links the ports a link end names (`"NODE:PORT,PORT"`, the `key` end of the link `link`) and returns the input
    /// or output buses they take, or nil after reporting why they cannot be linked.
    mutating func linkPorts(_ symbols: [String], end: LinkEnd, issues: inout GraphIssues) -> [Int]?
    /// Warnings about inputs left unlinked once the links are read (a sidechain reading silence).
    func unlinkedInputWarnings(id: String) -> [String]
    /// This node with a file setting changed by `command` (a new file is loaded by a new instance), or nil when the
    /// command changes no file. Throws when the file cannot be used or `files` may not read it.
    func settingFile(_ command: NodeCommand, files: FileAccess) throws -> (any NodeDefinition)?
}

extension NodeDefinition {
    /// The `type` string of this node's kind.
    public var typeName: String { Self.typeName }

    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? { nil }
    public func applying(_ command: NodeCommand) -> any NodeDefinition { self }
    public var liveSettings: [(key: String, value: JSONValue?)] { [] }
    public var initialCommands: [NodeCommand] { [] }
    public var descriptor: NodeDescriptor { Self.descriptor }
    public var traits: NodeTraits { descriptor.traits }
    public func value(of parameter: ParameterID) -> Double? { nil }
    public var presetName: String? { nil }
    public func hasPreset(_ name: String) -> Bool { false }
    public func carriesEvents(bus: Int) -> Bool { false }
    public var mainEventInput: String? { nil }
    public var midiInputPort: String? { nil }
    public var outputTarget: String? { nil }
    public var rtpOutput: RTPSession? { nil }
    public func virtualSinkName(id: String, graphName: String) -> String? { nil }
    public func unlinkedInputWarnings(id: String) -> [String] { [] }
    public func settingFile(_ command: NodeCommand, files: FileAccess) throws -> (any NodeDefinition)? { nil }

    public mutating func linkPorts(_ symbols: [String], end: LinkEnd, issues: inout GraphIssues) -> [Int]? {
        end.reportNotPorts(issues: &issues)
        return nil
    }

    static func parseDefinition(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> (
        any NodeDefinition
    )? {
        parse(settings, context: context, issues: &issues)
    }
}

/// One end of a link that names ports (`"to": "comp:sc"`): the link's settings, which end, its text and the node id.
public struct LinkEnd {
    public var settings: NodeSettings
    /// "from" or "to".
    public var key: String
    public var text: String
    public var nodeID: String
    public var isInput: Bool { key == "to" }

    /// Reports that the node has no ports to link by name.
    public func reportNotPorts(issues: inout GraphIssues) {
        issues.report(
            settings.path(key),
            "'\(text)': only an lv2 node's ports can be linked by name; other nodes take a bus number after ':'",
            at: settings.object[key])
    }
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
    var parameters: [ParameterDescriptor] { get }
    /// Preset names for `preset` (for `list`).
    var presetNames: [String] { get }
    /// The frames by which the node delays what passes through it (a plugin's reported latency).
    var latency: Int { get }
    /// True when the node may start to sound after a silence with nothing new at its inputs (a MIDI file playing, a
    /// plugin without audio inputs): a run whose streams ended must then keep rendering.
    var mayMakeSoundUnprompted: Bool { get }
    /// Stops background work and frees everything; the render world must no longer use the kernel.
    func close()
    /// Live (a real-time thread renders) or offline, for the nodes that care (LV2 workers, lv2:freeWheeling, how an
    /// iPod EQ warms a new filter bank).
    func setRealTime(_ live: Bool)
    /// Gives the inputs the delays `frames` that align parallel paths (nodes that mix their inputs).
    func compensate(_ frames: [Int], format: GraphFormat)
    /// The messages that set the input delays `frames` while the node may render, or nil when they do not fit in
    /// what `compensate` made room for.
    func delayMessages(_ frames: [Int]) -> [ControlMessage]?
    /// The media stream it plays, for a `stream` node.
    var mediaStream: StreamInstance? { get }
    /// The live input it reads, for a `capture` or `sink` node.
    var liveInput: LiveInputInstance? { get }
    /// The plugin it hosts, for an `lv2` node.
    var hostedPlugin: (any HostedPlugin)? { get }
}

extension NodeInstance {
    public func start() {}
    public var parameters: [ParameterDescriptor] { [] }
    public var presetNames: [String] { [] }
    public var latency: Int { 0 }
    public var mayMakeSoundUnprompted: Bool { false }
    public func setRealTime(_ live: Bool) {}
    public func compensate(_ frames: [Int], format: GraphFormat) {}
    public func delayMessages(_ frames: [Int]) -> [ControlMessage]? { [] }
    public var mediaStream: StreamInstance? { nil }
    public var liveInput: LiveInputInstance? { nil }
    public var hostedPlugin: (any HostedPlugin)? { nil }

    public func perform(_ command: NodeCommand, concurrent: Bool, send: (ControlMessage) throws -> Void) throws {
        try messages(for: command).forEach(send)
    }
}

/// The registry of node kinds.
public enum NodeKinds {
    public static let all: [any NodeDefinition.Type] = [
        StreamNode.self, CaptureNode.self, SinkNode.self, MixerNode.self, IPodEQNode.self, PEQNode.self, LV2Node.self,
        LADSPANode.self,
        MIDINode.self, OutputNode.self,
    ]

    public static func named(_ type: String) -> (any NodeDefinition.Type)? {
        all.first { $0.typeName == type }
    }
}
