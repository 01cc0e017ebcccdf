import Synchronization

/// The live MIDI inputs `midi` nodes name (`"port": "keys"`): one message queue per name, shared by every graph that
/// names it (a loaded graph's node keeps its port's messages) and kept for the life of the process, so a PipeWire
/// stream's callback never writes into a freed queue. `graphhost run` opens one PipeWire MIDI input per name.
final class MIDIInputPorts: Sendable {
    static let shared = MIDIInputPorts()
    private let rings = Mutex<[String: MIDIEventRing]>([:])

    /// The queue of the port `name`, made on first use.
    func ring(for name: String) -> MIDIEventRing {
        rings.withLock { rings in
            if let ring = rings[name] { return ring }
            let ring = MIDIEventRing.allocate()
            rings[name] = ring
            return ring
        }
    }

    /// Every port named so far, with its queue.
    var all: [(name: String, ring: MIDIEventRing)] {
        rings.withLock { $0.map { ($0.key, $0.value) }.sorted { $0.name < $1.name } }
    }
}
