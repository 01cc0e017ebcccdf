import Foundation

/// `midi`: a source of MIDI events for an instrument, here a Standard MIDI File (`file`, relative to the graph) played
/// from the start of the graph. Its one output carries events, not audio: it links to an lv2 instrument only.
public struct MIDINode: NodeDefinition {
    public static let typeName = "midi"
    public static let settingKeys = ["file"]

    public var path: String
    var file: MIDIFile

    public var inputBuses: Int { 0 }
    public var outputBuses: Int { 1 }
    public var summary: [(String, String)] {
        [("file", path), ("events", "\(file.events.count)"), ("duration", Format.number((file.duration * 1000).rounded() / 1000) + " s")]
    }

    public static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> MIDINode? {
        guard let given = settings.string("file", issues: &issues) else {
            if settings.object["file"] == nil { issues.report(settings.path, "missing \"file\" (a Standard MIDI File)", at: settings.object) }
            return nil
        }
        let path = given.hasPrefix("/") ? given : context.baseDirectory.appendingPathComponent(given).standardizedFileURL.path
        do {
            return MIDINode(path: path, file: try MIDIFile(path: path))
        } catch {
            issues.report(settings.path("file"), "\(error)", at: settings.object["file"])
            return nil
        }
    }

    public func instantiate(id: String, format: GraphFormat) throws -> NodeInstance {
        MIDIInstance(id: id, node: self, format: format)
    }

    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? {
        (old as? MIDINode)?.path == path ? [] : nil
    }
}

/// A running `midi` node: its events at the graph's rate and the kernel that sends them.
final class MIDIInstance: NodeInstance {
    let id: String
    let kernelPointer: UnsafeMutablePointer<MIDIFileKernel>
    let events: UnsafeMutablePointer<MIDIEvent>

    init(id: String, node: MIDINode, format: GraphFormat) {
        self.id = id
        let rate = Double(format.sampleRate)
        let list = node.file.events.map { event -> MIDIEvent in
            let b = event.bytes + [0, 0, 0]
            return MIDIEvent(frame: Int((event.seconds * rate).rounded()), size: UInt32(event.bytes.count), bytes: (b[0], b[1], b[2]))
        }
        events = .allocateRender(capacity: max(1, list.count))
        events.initialize(from: list, count: list.count)
        kernelPointer = .allocateRender(capacity: 1)
        kernelPointer.initialize(to: MIDIFileKernel(
            events: events, count: list.count, capacity: format.channels * format.maxFrames * MemoryLayout<Float>.size,
            sequenceType: URIDMap.shared.map("http://lv2plug.in/ns/ext/atom#Sequence"),
            midiEventType: URIDMap.shared.map(LV2URI.midiEvent)))
    }

    var kernel: RenderStep.Kernel { .midi(kernelPointer) }

    func check(_ command: NodeCommand) throws {
        throw CommandError("midi node '\(id)' has no parameters or presets")
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
