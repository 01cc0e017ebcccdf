import Atomics
import Glibc

/// The helper process's side of an isolated node: the plugin's own step (its kernel reading the shared input and
/// writing the shared output) and the queue of changes its control thread sends, each stamped with the first block
/// it applies to: the block after the last one the host had posted when the command came, as in process the change
/// applies to the render call after the command.
public struct IsolatedHelperStep {
    public let block: IsolatedBlock
    public let step: RenderStep
    public let messages: ControlQueue
    let stamps: UnsafeMutablePointer<Int>
    public let doneFD: Int32

    public init(block: IsolatedBlock, step: RenderStep, messages: ControlQueue, doneFD: Int32) {
        self.block = block
        self.step = step
        self.messages = messages
        self.doneFD = doneFD
        stamps = .allocateRender(capacity: messages.index.capacity)
    }

    /// Control thread: queues a change for the next block the host posts; false when the queue is full.
    public func send(_ message: ControlMessage) -> Bool {
        guard messages.index.writable() > 0 else { return false }
        let slot = messages.index.written.load(ordering: .relaxed) & (messages.index.capacity - 1)
        stamps[slot] = block.posted.load(ordering: .acquiring) + 1
        return messages.push(message)
    }

    /// Takes over where an earlier helper stopped: any block it left unfinished counts as done (missed).
    public func start() {
        block.done.store(block.posted.load(ordering: .acquiring), ordering: .releasing)
    }

    /// Renders the posted block when one is waiting, after the changes sent so far; returns whether it did.
    @_noLocks
    public func serve() -> Bool {
        let posted = block.posted.load(ordering: .acquiring)
        guard posted != block.done.load(ordering: .relaxed) else { return false }
        while let message = messages.peek() {
            let slot = messages.index.read.load(ordering: .relaxed) & (messages.index.capacity - 1)
            guard stamps[slot] <= posted else { break }
            if case .kernel(let change) = message { change.apply() }
            messages.dropFirst()
        }
        let frames = min(max(block.postedFrames.load(ordering: .relaxed), 1), block.frames)
        let slice = RenderSlice(
            frames: frames, channels: block.channels, channelStride: block.frames, guardOutput: true,
            time: block.hasTime.pointee ? UnsafePointer(block.time) : nil)
        step.kernel.render(step, slice)
        block.answered.store(posted, ordering: .releasing)
        block.done.store(posted, ordering: .releasing)
        var one: UInt64 = 1
        // An eventfd write never blocks while its counter is far below its maximum.
        _ = _unsafePerformance { write(doneFD, &one, 8) }
        return true
    }
}
