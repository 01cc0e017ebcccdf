import Atomics
import CPipeWireGlue

/// Renders a graph with live inputs in the same cycle as its inputs, as PipeWire's own filter-chain does: the playback
/// stream is a trigger stream (PipeWire does not wake it by itself), and the last of the live inputs to run in a cycle
/// runs it, on the same data thread, right after copying its audio. So a live input adds no latency, and the data
/// thread wakes once a cycle instead of once for the inputs and once more for the output.
///
/// An input counts once it has run (a stream still negotiating does not hold the cycle up) until the player takes it
/// out before destroying it. Every stream of the graph is in one node group, so each input runs in every cycle the
/// group runs, linked or not. Render memory: the data thread owns the cycle fields; `members` is shared with the
/// control world.
struct CycleGate {
    /// The playback stream; set under the loop lock while no input stream exists.
    var output: OpaquePointer?
    /// The hold stream while it is active (also a trigger stream, run after the output).
    let hold: UnsafeAtomic<UnsafeMutableRawPointer?>
    /// One bit per input that has run and is not being removed.
    let members: UnsafeAtomic<UInt64>
    /// The graph clock position of the cycle under way, the inputs that ran in it, and whether the output ran.
    var cycle: UInt64 = .max
    var arrived: UInt64 = 0
    var fired = false

    /// At most this many inputs are gated (one bit each); a graph with more renders one cycle behind its inputs.
    static let capacity = UInt64.bitWidth

    static func allocate() -> UnsafeMutablePointer<CycleGate> {
        let gate = UnsafeMutablePointer<CycleGate>.allocateRender(capacity: 1)
        gate.initialize(to: CycleGate(hold: .create(nil), members: .create(0)))
        return gate
    }

    static func deallocate(_ gate: UnsafeMutablePointer<CycleGate>) {
        gate.pointee.members.destroy()
        gate.pointee.hold.destroy()
        gate.deallocateRender()
    }

    /// Input `bit` has copied cycle `cycle`'s audio: runs the output once every member has (data thread).
    @_noLocks
    mutating func arrive(bit: UInt64, joined: inout Bool, cycle: UInt64) {
        if !joined {
            joined = true
            members.loadThenBitwiseOr(with: bit, ordering: .relaxed)
        }
        if cycle != self.cycle {
            self.cycle = cycle
            arrived = 0
            fired = false
        }
        arrived |= bit
        let expected = members.load(ordering: .relaxed)
        guard !fired, arrived & expected == expected, let output else { return }
        fired = true
        // On the stream's own data loop PipeWire runs the output's process callback here, without queueing.
        _ = _unsafePerformance { pw_stream_trigger_process(output) }
        if let hold = self.hold.load(ordering: .acquiring) {
            _ = _unsafePerformance { pw_stream_trigger_process(OpaquePointer(hold)) }
        }
    }

    /// Takes input `bit` out (control world): the output no longer waits for it.
    func leave(bit: UInt64) {
        members.loadThenBitwiseAnd(with: ~bit, ordering: .relaxed)
    }
}
