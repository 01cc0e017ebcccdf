/// Pause and play for a whole plan: a gain that fades the output out and in; once faded out, nothing runs
/// (streams are not pulled, so they resume where they paused).
public struct Transport {
    public var gain = SmoothedGain(1)
    public var paused = false
    public let fadeFrames: Int

    public static let pauseParameter: Int32 = 0
    public static let playParameter: Int32 = 1

    public init(fadeFrames: Int) { self.fadeFrames = fadeFrames }

    /// Ends a slice where a pause's fade ends, so the graph stops at the same frame however it is sliced.
    @_noLocks
    func limit(_ frames: Int) -> Int {
        paused && gain.remaining > 0 ? min(frames, gain.remaining) : frames
    }

    var isSilent: Bool {
        @_noLocks get { paused && gain.isSteady && gain.current == 0 }
    }
}

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
    public let transport: UnsafeMutablePointer<Transport>

    public init(steps: UnsafeMutableBufferPointer<RenderStep>, channels: Int, maxFrames: Int,
                outputBus: UnsafeMutablePointer<Float>, messages: ControlQueue, transport: UnsafeMutablePointer<Transport>) {
        self.steps = steps
        self.channels = channels
        self.maxFrames = maxFrames
        self.outputBus = outputBus
        self.messages = messages
        self.transport = transport
    }

    /// Renders `frames` interleaved frames of any count: pending control messages are applied first,
    /// then the graph runs in slices of at most `maxFrames`.
    @_noLocks
    public func render(frames: Int, interleaved destination: UnsafeMutablePointer<Float>) {
        deliverMessages()
        var done = 0
        while done < frames {
            let slice = transport.pointee.limit(min(maxFrames, frames - done))
            runSliceWithTransport(frames: slice)
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
            let slice = transport.pointee.limit(min(maxFrames, frames - done))
            runSliceWithTransport(frames: slice)
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
            case .output:
                let t = transport
                t.pointee.paused = message.parameter == Transport.pauseParameter
                t.pointee.gain.glide(to: t.pointee.paused ? 0 : 1, over: t.pointee.fadeFrames)
            case .stream: break
            }
        }
    }

    /// Runs one slice through the pause/play fade: silent and idle while paused, faded while changing.
    @_noLocks
    func runSliceWithTransport(frames: Int) {
        if transport.pointee.isSilent {
            Bus.clear(outputBus, channelStride: maxFrames, channels: channels, from: 0, to: frames)
            return
        }
        runSlice(frames: frames)
        if transport.pointee.gain.isSteady && transport.pointee.gain.current == 1 { return }
        for f in 0..<frames {
            let g = transport.pointee.gain.next()
            for c in 0..<channels { outputBus[c * maxFrames + f] *= g }
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
