import CSoxr

/// Streaming sample-rate conversion of interleaved Float32 with libsoxr (high quality).
final class Resampler {
    private let soxr: soxr_t
    let channels: Int
    let inputRate: Int
    let ratio: Double

    init(from inputRate: Int, to outputRate: Int, channels: Int) throws {
        var error: soxr_error_t?
        var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
        guard let s = soxr_create(Double(inputRate), Double(outputRate), UInt32(channels), &error, &io, &quality, nil),
            error == nil
        else {
            throw StreamError.decoder("cannot create a resampler \(inputRate) → \(outputRate) Hz")
        }
        soxr = s
        self.channels = channels
        self.inputRate = inputRate
        ratio = Double(outputRate) / Double(inputRate)
    }

    /// A variable-rate resampler (libsoxr's VR mode) for `channels` channels whose ratio `setRatio` moves, up to
    /// `maxRatio` input frames per output frame; it starts at 1.
    init(variableChannels channels: Int, maxRatio: Double) throws {
        var error: soxr_error_t?
        var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var quality = soxr_quality_spec(UInt(SOXR_HQ), UInt(SOXR_VR))
        guard let s = soxr_create(maxRatio, 1, UInt32(channels), &error, &io, &quality, nil), error == nil else {
            throw StreamError.decoder("cannot create a variable-rate resampler")
        }
        soxr = s
        self.channels = channels
        inputRate = 0
        ratio = 1
        soxr_set_io_ratio(soxr, 1, 0)
    }

    /// Moves a variable-rate resampler to `ioRatio` input frames per output frame over the next `slew` output frames.
    func setRatio(_ ioRatio: Double, slew: Int) { soxr_set_io_ratio(soxr, ioRatio, slew) }

    /// Output frames held back inside the resampler.
    var delayFrames: Double { soxr_delay(soxr) }

    deinit { soxr_delete(soxr) }

    /// Converts `frames` input frames (nil input flushes the tail); calls `emit` with each output block.
    func process(
        _ input: UnsafePointer<Float>?, frames: Int, scratch: UnsafeMutableBufferPointer<Float>,
        emit: (UnsafePointer<Float>, Int) -> Void
    ) {
        let outCapacity = scratch.count / channels
        var consumed = 0
        repeat {
            var inDone = 0
            var outDone = 0
            let inPtr = input.map { UnsafeRawPointer($0 + consumed * channels) }
            _ = soxr_process(
                soxr, inPtr, input == nil ? 0 : frames - consumed, &inDone,
                UnsafeMutableRawPointer(scratch.baseAddress!), outCapacity, &outDone)
            consumed += inDone
            if outDone > 0 { emit(scratch.baseAddress!, outDone) }
            if input == nil && outDone == 0 { return }
            if input != nil && inDone == 0 && outDone == 0 { return }
        } while input == nil || consumed < frames
    }
}
