/// An immutable, fully prepared render schedule: steps in topological order over preallocated
/// planar buses. Everything it touches is plain memory owned by the control world (`CompiledGraph`).
public struct RenderPlan {
    public let steps: UnsafeMutableBufferPointer<RenderStep>
    public let channels: Int
    /// Frames per bus channel; the largest slice one step processes.
    public let maxFrames: Int
    /// The bus the output node reads.
    public let outputBus: UnsafeMutablePointer<Float>
    public let messages: ControlQueue

    public init(steps: UnsafeMutableBufferPointer<RenderStep>, channels: Int, maxFrames: Int,
                outputBus: UnsafeMutablePointer<Float>, messages: ControlQueue) {
        self.steps = steps
        self.channels = channels
        self.maxFrames = maxFrames
        self.outputBus = outputBus
        self.messages = messages
    }

    /// Renders `frames` interleaved frames of any count: pending control messages are applied first,
    /// then the graph runs in slices of at most `maxFrames`.
    @_noLocks
    public func render(frames: Int, interleaved destination: UnsafeMutablePointer<Float>) {
        deliverMessages()
        var done = 0
        while done < frames {
            let slice = min(maxFrames, frames - done)
            runSlice(frames: slice)
            let out = destination + done * channels
            for c in 0..<channels {
                let bus = outputBus + c * maxFrames
                for f in 0..<slice { out[f * channels + c] = bus[f] }
            }
            done += slice
        }
    }

    /// Renders `frames` frames into planar channels (`destination[c]`); same rules as `render(frames:interleaved:)`.
    @_noLocks
    public func render(frames: Int, planar destination: UnsafePointer<UnsafeMutablePointer<Float>>) {
        deliverMessages()
        var done = 0
        while done < frames {
            let slice = min(maxFrames, frames - done)
            runSlice(frames: slice)
            for c in 0..<channels {
                let bus = outputBus + c * maxFrames, out = destination[c] + done
                for f in 0..<slice { out[f] = bus[f] }
            }
            done += slice
        }
    }

    @_noLocks
    func deliverMessages() {
        while let message = messages.pop() {
            switch message.target {
            case .mixer(let k): k.pointee.apply(message)
            case .ipodEQ(let k): k.pointee.apply(message)
            case .lv2(let k): k.pointee.apply(message)
            case .stream, .output: break
            }
        }
    }

    @_noLocks
    func runSlice(frames: Int) {
        for step in steps {
            switch step.kernel {
            case .stream(let k):
                k.pointee.process(output: step.output!, channelStride: maxFrames, channels: channels, frames: frames)
            case .mixer(let k):
                k.pointee.process(inputs: step.inputs, output: step.output!, channelStride: maxFrames,
                                  channels: channels, frames: frames)
            case .ipodEQ(let k):
                k.pointee.process(input: step.inputs[0], output: step.output!, channelStride: maxFrames,
                                  channels: channels, frames: frames)
            case .lv2(let k):
                k.pointee.process(input: step.inputs[0], output: step.output!, channelStride: maxFrames,
                                  channels: channels, frames: frames)
            case .output:
                break
            }
        }
    }
}
