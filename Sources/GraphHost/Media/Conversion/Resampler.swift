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
