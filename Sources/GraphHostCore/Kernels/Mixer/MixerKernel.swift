/// The render side of the `mixer` node: sums its input buses with per-input and master gains, each input delayed as
/// latency compensation asks.
public struct MixerKernel {
    /// A new linear gain, reached over `rampSamples`; or an input's new compensating delay.
    public enum Change {
        case volume(input: Int, gain: Float)
        case master(gain: Float)
        case delay(input: Int, frames: Int)
    }

    public let inputCount: Int
    /// `inputCount` input gains followed by the master gain.
    public let gains: UnsafeMutablePointer<SmoothedGain>
    public let rampSamples: Int
    /// One delay per input and a bus to delay into, when the graph needs compensation here; nil otherwise.
    public var delays: UnsafeMutablePointer<InputDelay>?
    public var delayed: UnsafeMutablePointer<Float>?

    public init(inputCount: Int, gains: UnsafeMutablePointer<SmoothedGain>, rampSamples: Int) {
        self.inputCount = inputCount
        self.gains = gains
        self.rampSamples = rampSamples
    }

    @_noLocks
    public func apply(_ change: Change) {
        switch change {
        case .volume(let input, let gain):
            guard input >= 0 && input < inputCount else { return }
            gains[input].glide(to: gain, over: rampSamples)
        case .master(let gain):
            gains[inputCount].glide(to: gain, over: rampSamples)
        case .delay(let input, let frames):
            guard let delays, input >= 0 && input < inputCount else { return }
            delays[input].frames = max(0, min(frames, delays[input].capacity - 1))
        }
    }

    /// Mixes `frames` frames; with `levels`, adds the output's levels to them as the last input is added, and returns
    /// whether it did (not while that input's or the master gain glides, or the master gain is not 1).
    @_noLocks @discardableResult
    public func process(
        inputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, output: UnsafeMutablePointer<Float>,
        channelStride: Int, channels: Int, frames: Int, levels: LevelMeter.RunLevels? = nil
    ) -> Bool {
        let master = gains[inputCount]
        let measuredInput = levels != nil && master.isSteady && master.current == 1 ? inputCount - 1 : -1
        var measured = false
        Bus.clear(output, channelStride: channelStride, channels: channels, from: 0, to: frames)
        for i in 0...inputCount {
            let isMaster = i == inputCount
            var source = isMaster ? output : inputs[i]
            if !isMaster, let delays, let delayed {
                // Every input runs through its ring (a delay of 0 copies), so a delay set later starts from the
                // input's recent past.
                delays[i].process(
                    source, into: delayed, channelStride: channelStride, channels: channels, count: frames)
                source = delayed
            }
            if gains[i].isSteady {
                let g = gains[i].current
                if isMaster && g == 1 { continue }
                for c in 0..<channels {
                    let src = source + c * channelStride
                    let dst = output + c * channelStride
                    if isMaster {
                        for f in 0..<frames { dst[f] = src[f] * g }
                    } else if i == measuredInput, let levels {
                        SampleRunLevels.scaleAdd(
                            dst, src, gain: g, count: frames, squares: levels.squares + c, peak: levels.peaks + c)
                        measured = true
                    } else {
                        for f in 0..<frames { dst[f] += src[f] * g }
                    }
                }
            } else {
                for f in 0..<frames {
                    let g = gains[i].next()
                    for c in 0..<channels {
                        let at = c * channelStride + f
                        output[at] = isMaster ? output[at] * g : output[at] + source[at] * g
                    }
                }
            }
        }
        return measured
    }
}

extension MixerKernel: RenderKernel {
    @_noLocks
    public func render(_ step: RenderStep, _ slice: RenderSlice) {
        let levels = step.meter?.pointee.runLevels(channels: slice.channels)
        let measured = process(
            inputs: step.inputs, output: step.output!, channelStride: slice.channelStride, channels: slice.channels,
            frames: slice.frames, levels: levels)
        if measured { step.meter!.pointee.kernelMeasured() }
    }
}
