import Atomics
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// A swap between its three steps: prepared under the session (which nodes are kept), built and warmed up without
/// it (instances, plugins, streams buffering for up to `warmUpTimeout`), then committed under it. Only the thread
/// that prepared it builds it; `cancel` may come from any thread.
public final class PendingSwap: @unchecked Sendable {
    public let document: GraphDocument
    let old: CompiledGraph
    let keep: Set<String>
    /// Whether a real-time thread renders: the new graph's streams must buffer before the switch.
    let live: Bool
    let mode: SwapMode
    /// The slice length the new instances are told they mostly run.
    let nominalFrames: Int?
    /// Nodes of the running graph built afresh in a swap to that same graph (`GraphSession.followBlockLength`).
    let renewing: Set<String>
    /// The control queue and the position in it of the transition of the swap before this one, when one was sent.
    let previous: (queue: ControlQueue, position: Int)?
    private(set) var next: CompiledGraph?
    private let cancelled = ManagedAtomic(false)
    /// Whether a thread waits in `awaitPreviousTransition`, and whether `stopWaiting` waits for it to leave.
    private enum Waiting { case idle, waiting, closing, closed }
    private let waiting = Mutex(Waiting.idle)
    private let waiterLeft = DispatchSemaphore(value: 0)

    init(
        document: GraphDocument, old: CompiledGraph, keep: Set<String>, live: Bool, mode: SwapMode, nominalFrames: Int?,
        renewing: Set<String> = [], previous: (queue: ControlQueue, position: Int)? = nil
    ) {
        self.previous = previous
        self.mode = mode
        self.nominalFrames = nominalFrames
        self.renewing = renewing
        self.document = document
        self.old = old
        self.keep = keep
        self.live = live
    }

    /// Instantiates the new graph (taking the kept instances from the old one) and, live, waits until its new
    /// streams have buffered and the render world has begun the previous swap's transition. Does not touch the
    /// running graph.
    func build() throws {
        let next = try CompiledGraph(document, keeping: old, keep: keep, nominalFrames: nominalFrames)
        self.next = next
        next.setRealTime(live, except: keep)
        next.start()
        guard live else { return }
        try warmUp(next)
        // A renewal is built on the run loop's thread, which must stay free to wake a resting stream.
        if renewing.isEmpty { try awaitPreviousTransition() }
    }

    /// Waits until the render world has taken the previous swap's transition (it takes one when the one before has
    /// faded), so swaps are sent no faster than the render world plays them. Until its transition has played, a
    /// swap holds the graph it replaces, its own graph and the transition's plan: sent faster (a script of `load`s,
    /// a page's), swaps would queue up behind one another without bound, each holding memory, until the control
    /// queue is full. Gives up waiting after `warmUpTimeout` (the render world has stopped: the daemon went away),
    /// and the swap then queues behind the previous one.
    func awaitPreviousTransition() throws {
        guard let (queue, position) = previous else { return }
        // The queue is the engine's: `stopWaiting` keeps the session from freeing it while this reads it.
        let entered = waiting.withLock { state in
            guard state != .closed else { return false }
            state = .waiting
            return true
        }
        guard entered else { throw ControlError.swapCancelled(document.displayName) }
        defer {
            let stopping = waiting.withLock { state in
                defer { state = state == .closing ? .closed : .idle }
                return state == .closing
            }
            if stopping { waiterLeft.signal() }
        }
        let index = queue.index
        let deadline = Date().addingTimeInterval(GraphSession.warmUpTimeout)
        while index.read.load(ordering: .acquiring) <= position {
            if cancelled.load(ordering: .acquiring) { throw ControlError.swapCancelled(document.displayName) }
            let seconds = deadline.timeIntervalSinceNow
            guard seconds > 0 else { return }
            // Room for every message written so far beyond the transition means the render world has read past it.
            let room = index.capacity - (index.written.load(ordering: .relaxed) - position - 1)
            queue.room.wait(untilWritable: room, in: index, seconds: seconds)
        }
    }

    /// Waits until every stream the new graph started has buffered enough to play.
    func warmUp(_ next: CompiledGraph) throws {
        let deadline = Date().addingTimeInterval(GraphSession.warmUpTimeout)
        for stream in next.streams where !next.keptIDs.contains(stream.id) {
            while !stream.canRender(frames: 1) {
                if let failure = stream.failure { throw failure }
                if cancelled.load(ordering: .acquiring) { throw ControlError.swapCancelled(document.displayName) }
                guard Date() < deadline else {
                    throw ControlError.warmUpTimeout(stream: stream.id, bufferSeconds: stream.node.bufferSeconds)
                }
                stream.wakeup.waitForData()
            }
            if let failure = stream.failure { throw failure }
        }
    }

    /// Stops the warm-up, or the wait for the previous transition, at its next look.
    func cancel() {
        cancelled.store(true, ordering: .releasing)
        if waiting.withLock({ $0 == .waiting }) { previous?.queue.room.post() }
    }

    /// Cancels, and returns once no thread waits on the control queue, which the closing session frees next.
    /// Called under the session.
    func stopWaiting() {
        cancel()
        let wasWaiting = waiting.withLock { state in
            defer { state = state == .waiting ? .closing : .closed }
            return state == .waiting
        }
        if wasWaiting { waiterLeft.wait() }
    }

    /// Frees what `build` made (kept instances stay with the running graph).
    func discard() {
        guard let next else { return }
        next.release(keep)
        next.close()
        self.next = nil
    }
}
