import Atomics

/// Which of `count` slots for banks the control world warmed are taken: bit s of `inUse` is set from when the
/// control world has warmed slot s until the render world, having taken it, or the control world, not sending it,
/// gives it back.
public struct WarmedSlots {
    public let inUse: UnsafeAtomic<Int>
    public let count: Int

    public static func create(count: Int) -> WarmedSlots {
        WarmedSlots(inUse: .create(0), count: count)
    }

    public func destroy() {
        inUse.destroy()
    }

    /// Control world: a slot to warm a bank in, or nil when every slot is taken.
    public func free() -> Int? {
        let inUse = inUse.load(ordering: .acquiring)
        return (0..<count).first { inUse & (1 << $0) == 0 }
    }

    /// Control world: marks `slot`, warmed, as taken, publishing what was written to it.
    public func take(_ slot: Int) {
        inUse.wrappingIncrement(by: 1 << slot, ordering: .releasing)
    }

    /// Gives a slot back: the render world took its bank, or its change was never sent.
    @_noLocks
    public func release(slot: Int) {
        inUse.wrappingDecrement(by: 1 << slot, ordering: .releasing)
    }
}
