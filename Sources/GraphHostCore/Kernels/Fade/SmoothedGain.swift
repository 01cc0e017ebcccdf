/// A linear gain that glides to a new target over a fixed number of samples, sample by sample,
/// so the result does not depend on how the audio is sliced into render calls.
public struct SmoothedGain {
    public var current: Float
    public var target: Float
    public var step: Float = 0
    public var remaining = 0

    public init(_ value: Float) {
        current = value
        target = value
    }

    @_noLocks
    public mutating func glide(to value: Float, over samples: Int) {
        target = value
        if samples <= 0 || value == current {
            current = value
            remaining = 0
        } else {
            remaining = samples
            step = (value - current) / Float(samples)
        }
    }

    public var isSteady: Bool {
        @_noLocks get { remaining == 0 }
    }

    @_noLocks @inline(__always)
    public mutating func next() -> Float {
        if remaining > 0 {
            remaining -= 1
            current = remaining == 0 ? target : current + step
        }
        return current
    }
}
