/// The outputs of a graph with several output nodes, each played by a PipeWire stream of its own. The first stream's
/// callback renders every output once per cycle into these planar buffers; each other stream's callback copies its
/// output's block from here (in the same cycle when PipeWire runs it after the first, else one cycle later: the
/// order is the driver's and does not change while playing). Render memory, written and read on the data thread only.
public struct OutputFanout {
    public let outputs: Int
    public let channels: Int
    /// Per output, a table of `channels` pointers into `samples` (output k, channel c: `samples + (k × channels + c) ×
    /// maxCallbackFrames`).
    public let tables: UnsafeMutablePointer<UnsafePointer<UnsafeMutablePointer<Float>>>
    let pointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let samples: UnsafeMutablePointer<Float>
    /// Frames in the latest rendered block, how many blocks were rendered, and how many each output has taken.
    public var frames = 0
    public var rendered = 0
    public let taken: UnsafeMutablePointer<Int>
    /// Blocks an output found nothing new to play (it played silence).
    public let missed: UnsafeMutablePointer<Int>

    public static func allocate(outputs: Int, channels: Int) -> UnsafeMutablePointer<OutputFanout> {
        let frames = PlaybackRenderer.maxCallbackFrames
        let samples = UnsafeMutablePointer<Float>.allocateRender(capacity: outputs * channels * frames)
        samples.initialize(repeating: 0, count: outputs * channels * frames)
        let pointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocateRender(capacity: outputs * channels)
        let tables = UnsafeMutablePointer<UnsafePointer<UnsafeMutablePointer<Float>>>.allocateRender(capacity: outputs)
        for k in 0..<outputs {
            for c in 0..<channels {
                (pointers + k * channels + c).initialize(to: samples + (k * channels + c) * frames)
            }
            (tables + k).initialize(to: UnsafePointer(pointers + k * channels))
        }
        let taken = UnsafeMutablePointer<Int>.allocateRender(capacity: outputs)
        taken.initialize(repeating: 0, count: outputs)
        let missed = UnsafeMutablePointer<Int>.allocateRender(capacity: outputs)
        missed.initialize(repeating: 0, count: outputs)
        let fanout = UnsafeMutablePointer<OutputFanout>.allocateRender(capacity: 1)
        fanout.initialize(
            to: OutputFanout(
                outputs: outputs, channels: channels, tables: tables, pointers: pointers, samples: samples,
                taken: taken, missed: missed))
        return fanout
    }

    public static func deallocate(_ fanout: UnsafeMutablePointer<OutputFanout>) {
        fanout.pointee.samples.deallocateRender()
        fanout.pointee.pointers.deallocateRender()
        fanout.pointee.tables.deallocateRender()
        fanout.pointee.taken.deallocateRender()
        fanout.pointee.missed.deallocateRender()
        fanout.deallocateRender()
    }

    /// Copies output `k`'s latest block into planar `channelPointers` (or interleaved `interleaved`), at most `frames`
    /// frames; returns the frames written (silence when there is no new block).
    @_noLocks
    public mutating func take(
        _ k: Int, frames: Int, planar channelPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>?,
        interleaved: UnsafeMutablePointer<Float>?
    ) -> Int {
        let fresh = taken[k] < rendered
        let n = frames < self.frames ? frames : self.frames
        let table = tables[k]
        for c in 0..<channels {
            let from = table[c]
            for f in 0..<n {
                let v = fresh ? from[f] : 0
                if let channelPointers {
                    channelPointers[c][f] = v
                } else if let interleaved {
                    interleaved[f * channels + c] = v
                }
            }
        }
        if fresh { taken[k] = rendered } else { missed[k] += 1 }
        return n
    }
}
