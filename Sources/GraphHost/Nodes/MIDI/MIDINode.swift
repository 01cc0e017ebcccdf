import FoundationEssentials
import Glibc

/// `midi`: a source of MIDI events for instruments and MIDI processors. `port` names a PipeWire MIDI input that
/// `graphhost run` opens (a keyboard or a sequencer links to it); `file`, a Standard MIDI File relative to the graph,
/// is played from the start of the graph when rendering offline, and live when there is no port. Its one output
/// carries events, not audio.
public struct MIDINode: NodeDefinition {
    public static let typeName = "midi"

    static let fileSetting = SettingDescriptor(
        "file", .string,
        doc:
            "A Standard MIDI File (format 0 or 1, tempo changes followed), relative to the graph "
            + "file; played from the start of the graph offline, and live when there is no port."
    )
    static let portSetting = SettingDescriptor(
        "port", .string, pattern: #"^[^\s/:]+$"#,
        doc:
            "A live MIDI input's name: `graphhost run` opens the PipeWire "
            + "MIDI input GRAPHNAME.PORT (one midi node per port)."
    )

    public static let descriptor = NodeDescriptor(
        typeName: typeName,
        summary: "A source of MIDI events for instruments and MIDI processors: a file or a live input.",
        ports: [PortDescriptor(.event, .output, name: "out")], traits: [.isSource, .sendsEvents, .takesFiles],
        settings: [fileSetting, portSetting], requiresAnyOf: ["file", "port"])

    public var midiInputPort: String? { port }

    public var path: String?
    var file: MIDIFile?
    /// The live input's name (its PipeWire node is GRAPHNAME.PORT).
    public var port: String?

    public var inputBuses: Int { 0 }
    public var outputBuses: Int { 1 }
    public var summary: [(String, String)] {
        var items: [(String, String)] = []
        if let port { items.append(("port", "\(port) (a PipeWire MIDI input when running)")) }
        if let path, let file {
            items += [
                ("file", path), ("events", "\(file.events.count)"),
                ("duration", Format.number((file.duration * 1000).rounded() / 1000) + " s"),
            ]
        }
        return items
    }

    public static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> MIDINode? {
        let port = settings.string(portSetting, issues: &issues)
        if let port, port.isEmpty || port.contains(where: { $0.isWhitespace || $0 == "/" || $0 == ":" }) {
            issues.report(
                settings.path("port"), "'\(port)': a port name is a word without spaces, '/' or ':'",
                at: settings.object["port"])
            return nil
        }
        guard let given = settings.string(fileSetting, issues: &issues) else {
            if settings.object["file"] == nil && settings.object["port"] == nil {
                issues.report(
                    settings.path, "missing \"file\" (a Standard MIDI File) or \"port\" (a live MIDI input's name)",
                    at: settings.object)
            }
            return port.map { MIDINode(path: nil, file: nil, port: $0) }
        }
        do {
            let path = try context.files.confine(
                given.hasPrefix("/")
                    ? given : context.baseDirectory.appendingPathComponent(given).standardizedFileURL.path,
                given: given)
            return MIDINode(path: path, file: try MIDIFile(path: path), port: port)
        } catch {
            issues.report(settings.path("file"), "\(error)", at: settings.object["file"])
            return nil
        }
    }

    public func instantiate(id: String, format: GraphFormat) throws -> NodeInstance {
        MIDIInstance(id: id, node: self, format: format)
    }

    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? {
        guard let old = old as? MIDINode, old.path == path, old.port == port else { return nil }
        return []
    }
}

/// A running `midi` node: its events at the graph's rate and the kernel that sends them.
final class MIDIInstance: NodeInstance {
    let id: String
    let kernelPointer: UnsafeMutablePointer<MIDISourceKernel>
    let events: UnsafeMutablePointer<MIDIEvent>
    /// Its messages may come after any silence.
    var mayMakeSoundUnprompted: Bool { true }

    init(id: String, node: MIDINode, format: GraphFormat) {
        self.id = id
        let rate = Double(format.sampleRate)
        let list = (node.file?.events ?? []).map { event -> MIDIEvent in
            let b = event.bytes + [0, 0, 0]
            return MIDIEvent(
                frame: Int((event.seconds * rate).rounded()), size: UInt32(event.bytes.count), bytes: (b[0], b[1], b[2])
            )
        }
        events = .allocateRender(capacity: max(1, list.count))
        events.initialize(from: list, count: list.count)
        kernelPointer = .allocateRender(capacity: 1)
        kernelPointer.initialize(
            to: MIDISourceKernel(
                events: events, count: list.count,
                capacity: format.channels * format.maxFrames * MemoryLayout<Float>.size,
                sequenceType: URIDMap.shared.map("http://lv2plug.in/ns/ext/atom#Sequence"),
                midiEventType: URIDMap.shared.map(LV2URI.midiEvent)))
        if let port = node.port { kernelPointer.pointee.live = MIDIInputPorts.shared.ring(for: port) }
    }

    /// Live, a node with a port reads it instead of its file. Call before the kernel renders.
    func setRealTime(_ live: Bool) {
        kernelPointer.pointee.readsLive = live && kernelPointer.pointee.live != nil
    }

    var kernel: RenderStep.Kernel { .midi(kernelPointer) }

    func check(_ command: NodeCommand) throws {
        throw NodeCommandError.notSupported("midi node '\(id)' has no parameters or presets")
    }

    func messages(for command: NodeCommand) throws -> [ControlMessage] {
        try check(command)
        return []
    }

    func close() {
        kernelPointer.deinitialize(count: 1).deallocateRender()
        events.deallocateRender()
    }
}
