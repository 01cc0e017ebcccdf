import Atomics
import FoundationEssentials
import Glibc

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
    private(set) var next: CompiledGraph?
    private let cancelled = ManagedAtomic(false)

    init(
        document: GraphDocument, old: CompiledGraph, keep: Set<String>, live: Bool, mode: SwapMode, nominalFrames: Int?,
        renewing: Set<String> = []
    ) {
        self.mode = mode
        self.nominalFrames = nominalFrames
        self.renewing = renewing
        self.document = document
        self.old = old
        self.keep = keep
        self.live = live
    }

    /// Instantiates the new graph (taking the kept instances from the old one) and, live, waits until its new
    /// streams have buffered. Does not touch the running graph.
    func build() throws {
        let next = try CompiledGraph(document, keeping: old, keep: keep, nominalFrames: nominalFrames)
        self.next = next
        next.setRealTime(live, except: keep)
        next.start()
        if live { try warmUp(next) }
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

    /// Stops the warm-up at its next look.
    func cancel() { cancelled.store(true, ordering: .releasing) }

    /// Frees what `build` made (kept instances stay with the running graph).
    func discard() {
        guard let next else { return }
        next.release(keep)
        next.close()
        self.next = nil
    }
}
