import Dispatch
import FoundationEssentials
import Glibc
import Logging
import Synchronization

/// The graph's parameters as the playback node's PipeWire params, like module-filter-chain's controls: PropInfo and
/// Props with `NODE:PARAM` names (`pw-dump` shows them). A Props param set on the node (`pw-cli set-param`) becomes
/// `set`, `preset` or `bypass` lines for `LiveControl.handle`, carried out on a thread of this surface's own (a
/// swap must not hold up PipeWire's loop); a value the parameter already holds is left alone, so a client that sends
/// the whole list back changes only what it moved. Every applied command, from any surface, publishes the values
/// again, from the same thread (a burst of commands is published once it is over, never on the command's thread).
/// `@unchecked Sendable`: of the player it uses only `publish` (which takes PipeWire's loop lock) and `propsChanged`
/// (set before the player connects and after it stopped).
public final class PipeWireParams: ControlSurface, @unchecked Sendable {
    private let player: PipeWirePlayer
    /// Work for this surface's thread: Props changes from PipeWire's loop thread, and whether to publish.
    private final class Queue: Sendable {
        struct Shared {
            var changes: [(name: String, value: Double)] = []
            var publish = false
            var stopping = false
        }
        let shared = Mutex(Shared())
        let wakeup = DispatchSemaphore(value: 0)
    }
    private let queue = Queue()
    private let thread = Mutex<JoinableThread?>(nil)
    private static let logger = Logger(label: "graphhost.params")

    /// Listens to the player's Props changes; set up before the player connects.
    public init(player: PipeWirePlayer) {
        self.player = player
        let queue = queue
        player.propsChanged = { name, value, valid in
            // PipeWire's loop thread: queue the change, never carry it out here. Names without a node are the
            // stream's own (channel volumes, the converter's settings) and not graphhost's.
            guard name.contains(":") else { return }
            guard valid else {
                return Self.logger.warning("PipeWire param '\(name)': the value is not a number or a bool; ignored")
            }
            queue.shared.withLock { $0.changes.append((name, value)) }
            queue.wakeup.signal()
        }
    }

    public func start(control: LiveControl) throws {
        publish(control)
        let queue = queue
        control.addListener { event in
            guard case .command = event else { return }
            queue.shared.withLock { $0.publish = true }
            queue.wakeup.signal()
        }
        thread.withLock {
            $0 = JoinableThread(name: "graphhost-params") { [self] in
                while true {
                    queue.wakeup.wait()
                    let (changes, stopping) = queue.shared.withLock { s in
                        defer { s.changes.removeAll() }
                        return (s.changes, s.stopping)
                    }
                    if stopping { return }
                    for (name, value) in changes { Self.apply(name: name, value: value, control: control) }
                    // Commands applied above set `publish` again: the next turn publishes them.
                    if queue.shared.withLock({ s in
                        defer { s.publish = false }
                        return s.publish
                    }) {
                        publish(control)
                    }
                }
            }
        }
    }

    /// Carries out one Props change, unless the parameter holds the value already; says why when it cannot.
    static func apply(name: String, value: Double, control: LiveControl) {
        let current = control.withSession { PublishedParameter.all($0.graph.document).first { $0.name == name } }
        if let current, current.holds(value) { return }
        do {
            // A name graphhost does not publish becomes `set`, whose reply says what is wrong with it.
            let request = try current?.request(value) ?? PublishedParameter.request(name: name, value: value)
            do {
                _ = try control.perform(request)
            } catch {
                logger.warning(
                    "PipeWire param '\(name)' = \(Format.number(value)) (\(request)): error: \(error); nothing changed")
            }
        } catch {
            logger.warning("PipeWire param '\(name)' = \(Format.number(value)): \(error); nothing changed")
        }
    }

    /// Publishes the values the graph plays now.
    func publish(_ control: LiveControl) {
        player.publish(control.withSession { PublishedParameter.all($0.graph.document) })
    }

    public func stop() {
        queue.shared.withLock { $0.stopping = true }
        queue.wakeup.signal()
        thread.withLock { $0 }?.join()
        player.propsChanged = nil
    }
}
