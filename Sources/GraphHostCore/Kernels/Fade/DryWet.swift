extension SmoothedGain {
    /// Scales a bus in place by the gain, gliding per frame. Steady at 1, the bus is left as it is.
    @_noLocks
    public mutating func scale(_ bus: UnsafeMutablePointer<Float>, channelStride: Int, channels: Int, frames: Int) {
        if isSteady && current == 1 { return }
        for f in 0..<frames {
            let g = next()
            for c in 0..<channels { bus[c * channelStride + f] *= g }
        }
    }

    /// Blends a processed signal with its input in place: output = input + g · (output − input), g gliding per
    /// frame (1 is all processed, 0 all input). Steady at 1, the output is left as it is.
    @_noLocks
    public mutating func blend(
        input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>,
        channelStride: Int, channels: Int, frames: Int
    ) {
        if isSteady && current == 1 { return }
        for f in 0..<frames {
            let g = next()
            for c in 0..<channels {
                let at = c * channelStride + f
                output[at] = input[at] + g * (output[at] - input[at])
            }
        }
    }
}
