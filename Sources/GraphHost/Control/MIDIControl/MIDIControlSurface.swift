import Atomics
import FoundationEssentials
import Glibc
import GraphHostCore
import Logging

/// The graph's MIDI control port: PipeWire's data thread queues the port's messages (the player opens it as
/// GRAPHNAME.PORT, like a `midi` node's port), and this surface's thread sleeps until a message arrives, then takes
/// what is queued, at most one turn every few milliseconds while messages keep coming. Control changes become `set`
/// commands (only each controller's latest value per turn), program changes `chain` or `preset` commands, through
/// `LiveControl.perform`; a control change while `learn` waits is bound first.
public final class MIDIControlSurface: ControlSurface, @unchecked Sendable {
    public let port: String
    private let ring: MIDIEventRing
    private let stopping = ManagedAtomic(false)
    private var thread: JoinableThread?
    private static let logger = Logger(label: "graphhost.midi-control")
    /// The shortest time between two turns (a knob turned sends far more messages than are worth applying).
    static let turnSeconds = 0.005

    /// Claims the port's queue, so the player opens the port when it connects.
    public init(port: String) {
        self.port = port
        ring = MIDIInputPorts.shared.ring(for: port)
    }

    public func start(control: LiveControl) throws {
        let (ring, stopping) = (ring, stopping)
        thread = JoinableThread(name: "graphhost-midi-control") {
            while !stopping.load(ordering: .acquiring) {
                ring.signal.wait(untilReadable: 1, in: ring.index)
                if stopping.load(ordering: .acquiring) { return }
                Self.turn(ring, control: control)
                usleep(useconds_t(Self.turnSeconds * 1e6))
            }
        }
    }

    public func stop() {
        stopping.store(true, ordering: .releasing)
        ring.signal.post()
        thread?.join()
        thread = nil
    }

    /// Takes every queued message and carries out what the mappings ask for.
    static func turn(_ ring: MIDIEventRing, control: LiveControl) {
        var changes: [(channel: Int, controller: Int, value: Int)] = []
        var programs: [(channel: Int, program: Int)] = []
        while let event = ring.pop() {
            let status = event.bytes.0 & 0xF0
            let channel = Int(event.bytes.0 & 0x0F) + 1
            if status == 0xB0 && event.size >= 3 {
                let controller = Int(event.bytes.1)
                changes.removeAll { $0.channel == channel && $0.controller == controller }
                changes.append((channel, controller, Int(event.bytes.2)))
            } else if status == 0xC0 && event.size >= 2 {
                programs.append((channel, Int(event.bytes.1)))
            }
        }
        guard !changes.isEmpty || !programs.isEmpty else { return }
        if let first = changes.first,
            let learned = control.withSession({ $0.bindLearned(channel: first.channel, controller: first.controller) })
        {
            logger.info(
                """
                learned: controller \(learned.controller) on channel \
                \(first.channel) moves \(learned.node) \(learned.parameter)
                """
            )
            control.publish(
                .learned(
                    channel: first.channel, controller: learned.controller, node: learned.node,
                    parameter: learned.parameter))
        }
        guard let map = control.withSession({ $0.graph.document.midiControl }) else { return }
        for change in changes {
            for m in map.controls
            where m.controller == change.controller && (m.channel == nil || m.channel == change.channel) {
                run(
                    .node(
                        NodeRequest(node: m.node, action: .set(parameter: m.parameter, value: m.value(change.value)))),
                    control)
            }
        }
        for program in programs {
            for m in map.programs
            where m.program == program.program && (m.channel == nil || m.channel == program.channel) {
                run(
                    m.chain.map { .chain(node: m.node, name: $0) }
                        ?? .node(NodeRequest(node: m.node, action: .preset(m.preset ?? ""))), control)
            }
        }
    }

    static func run(_ request: Command, _ control: LiveControl) {
        do {
            _ = try control.perform(request)
        } catch {
            logger.warning("MIDI control: '\(request)': error: \(error)")
        }
    }
}
