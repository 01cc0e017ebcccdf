import FoundationEssentials
import Glibc
import Synchronization

/// The one entry point of live control for a playing graph: every surface (console, socket, OSC, MPRIS, MIDI control,
/// PipeWire params, the watched file) hands it a `Command` and gets a `ControlResult` or a `ControlError`.
/// It owns the session: every thread reaches it through `perform` or `withSession`, one at a time.
public final class LiveControl: Sendable {
    private let session: Mutex<GraphSession>
    private let status: @Sendable (GraphSession) -> RunStatus
    private let quit: @Sendable () -> Void
    /// Receive every event: the socket's subscribers, OSC subscribers, MPRIS, the PipeWire params.
    private let listeners = Mutex<[@Sendable (ControlEvent) -> Void]>([])
    /// Surfaces' parts of `status` (the routes' moves, the output device followed).
    private let statusParts = Mutex<[@Sendable (inout RunStatus) -> Void]>([])
    private let restingFlag = Atomic(false)
    private let restingListeners = Mutex<[@Sendable () -> Void]>([])
    private let swapListeners = Mutex<[@Sendable (GraphDocument) -> Void]>([])

    /// Calls `listener` with the graph each swap brings in (a `load`, a reload, the service's device change), once
    /// it plays.
    public func addSwapListener(_ listener: @escaping @Sendable (GraphDocument) -> Void) {
        swapListeners.withLock { $0.append(listener) }
    }

    /// Tells the swap listeners that `document` now plays.
    func swapped(to document: GraphDocument) {
        swapListeners.withLock { $0 }.forEach { $0(document) }
    }

    /// Whether the run rests like a sink (`run --idle-after`): PipeWire runs nothing of it, so surfaces that refresh
    /// on a timer wait for an event instead (`addRestingListener` tells them when it changes).
    public var resting: Bool {
        get { restingFlag.load(ordering: .acquiring) }
        set {
            guard restingFlag.exchange(newValue, ordering: .acquiringAndReleasing) != newValue else { return }
            restingListeners.withLock { $0 }.forEach { $0() }
        }
    }

    /// Calls `listener` (on the run loop's thread) whenever `resting` changes.
    public func addRestingListener(_ listener: @escaping @Sendable () -> Void) {
        restingListeners.withLock { $0.append(listener) }
    }

    public init(
        session: sending GraphSession, status: @escaping @Sendable (GraphSession) -> RunStatus,
        quit: @escaping @Sendable () -> Void
    ) {
        self.session = Mutex(session)
        self.status = status
        self.quit = quit
    }

    /// Asks the run to stop, as the `quit` command does.
    public func requestQuit() { quit() }

    /// Adds a part to every `status` (called under the session: it must not call back into `perform`).
    public func addStatusPart(_ part: @escaping @Sendable (inout RunStatus) -> Void) {
        statusParts.withLock { $0.append(part) }
    }

    /// Adds a receiver of every event (called on the thread that publishes; it must not call back into `perform`).
    public func addListener(_ listener: @escaping @Sendable (ControlEvent) -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    /// Sends an event to every listener.
    public func publish(_ event: ControlEvent) {
        for listener in listeners.withLock({ $0 }) { listener(event) }
    }

    /// Carries out one command. A swap (`load`, `chain`, a new file for a plugin) is built and warmed up without
    /// holding the session, so other commands, `status` and `quit` are answered meanwhile; one swap is built at a time.
    /// A change publishes a `command` event. `files`: which files the command, and a graph it loads, may name (a
    /// remote surface passes `FileAccess.remote`).
    public func perform(_ request: Command, files: FileAccess = .owner) throws(ControlError) -> ControlResult {
        let arrival = MonotonicClock.nanos()
        enum Step: Sendable {
            case done(ControlResult)
            case build(PendingSwap, applied: Int)
        }
        let step = try session.withLock { session throws(ControlError) -> Step in
            switch request {
            case .status:
                var answer = status(session)
                for part in statusParts.withLock({ $0 }) { part(&answer) }
                return .done(.status(answer))
            case .list: return .done(.listing(NodeListing(session)))
            case .help(let verb):
                return .done(.help(CommandHelp.all.filter { verb == nil || $0.verb == verb }, detailed: verb != nil))
            case .quit:
                session.cancelSwap()
                quit()
                return .done(.quitting)
            default:
                let applied = session.appliedMessages.load(ordering: .acquiring)
                if let document = try session.swapTarget(for: request, files: files) {
                    return .build(try session.prepareSwap(to: document, mode: request.swapMode), applied: applied)
                }
                try session.apply(request)
                return .done(.done(request, arrival: arrival, appliedBefore: applied))
            }
        }
        let result: ControlResult
        switch step {
        case .done(let done):
            result = done
        case .build(let pending, let applied):
            do {
                try pending.build()
            } catch {
                session.withLock { $0.abandon(pending) }
                throw .swapFailed(error)
            }
            do {
                try session.withLock { session throws(ControlError) in try session.commit(pending) }
            } catch {
                session.withLock { $0.abandon(pending) }
                throw error
            }
            result = .done(request, arrival: arrival, appliedBefore: applied)
        }
        if case .done(let request, _, _) = result { publish(.command(request.description)) }
        return result
    }

    /// Reads one line of the text language, carries it out and answers with the socket's JSON reply
    /// (`{"ok":true,...}` or `{"ok":false,"error":...}`).
    public func reply(to line: String) -> String {
        let request: Command
        do { request = try Command.parse(line) } catch { return ControlError.unreadable(error).reply }
        do { return try perform(request).reply } catch { return error.reply }
    }

    /// Tells the graph's plugins the slice length the stream now runs (`GraphSession.followBlockLength`), building the
    /// swap that renews plugins without the options interface without holding the session. Throws what failed.
    public func followBlockLength(_ frames: Int) throws {
        guard
            let pending = try session.withLock({ session throws(ControlError) in try session.followBlockLength(frames) }
            )
        else { return }
        do {
            try pending.build()
            try session.withLock { session throws(ControlError) in try session.commit(pending) }
        } catch {
            session.withLock { $0.abandon(pending) }
            throw error
        }
    }

    /// Adds (`on`) or removes a watcher of `kind` on `node`'s output (nil: every output); `GraphSession.watch`.
    public func watch(_ kind: AnalysisKind, node: String?, on: Bool) throws(ControlError) {
        try session.withLock { session throws(ControlError) in try session.watch(kind, node: node, on: on) }
    }

    /// Stops waiting for a swap being built (the run is ending).
    public func cancelSwap() { session.withLock { $0.cancelSwap() } }

    /// Runs `body` with the session while no command is being carried out.
    @discardableResult
    public func withSession<T: Sendable>(_ body: (GraphSession) throws -> T) rethrows -> T {
        try session.withLock { try body($0) }
    }
}
