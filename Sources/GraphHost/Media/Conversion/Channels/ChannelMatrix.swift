import CFFmpegGlue
import Glibc

/// The gains that take one layout's channels to another's, applied to interleaved Float32 on the decoder thread.
/// Between layouts, libswresample builds it (ITU-R BS.775: centre and surrounds at −3 dB, the LFE left out unless
/// asked; then all gains scaled by one factor so that no output channel's sum exceeds 1, so the downmix cannot clip,
/// as `ffmpeg -ac` does). A mono source is played at full level on the channels it feeds (both sides of stereo, the
/// centre of 5.1).
struct ChannelMatrix {
    let inputs: Int
    let outputs: Int
    /// `gains[o * inputs + i]`: input channel i's gain in output channel o; nil when the layouts are the same.
    let gains: [Float]?
    /// Why the layouts could not be mapped, when the channels were mapped by position instead.
    let fallbackReason: String?

    /// Maps `source` to `target` as `mixing` asks; an explicit matrix whose columns do not match the source's
    /// channels is left aside (`explicitMatrixIgnored`).
    init(from source: ChannelLayout, to target: ChannelLayout, mixing: ChannelMixing) {
        inputs = source.channels
        outputs = target.channels
        if let matrix = mixing.matrix, matrix.count == target.channels,
            matrix.allSatisfy({ $0.count == source.channels })
        {
            gains = matrix.flatMap { $0.map(Float.init) }
            fallbackReason = nil
            return
        }
        let from = source.named
        if from == target {
            gains = nil
            fallbackReason = nil
            return
        }
        var built: [Double]?
        var reason: String?
        if from.mask == 0 || target.mask == 0 {
            reason = "no channel layout is known for \(from.mask == 0 ? from.channels : target.channels) channels"
        } else if let failure = gh_swresample_load() {
            reason = "libswresample could not be loaded: \(String(cString: failure))"
        } else {
            // libswresample 4 (FFmpeg 5.1) scales 64 rows of the matrix at the given stride, whatever the layouts'
            // channel counts: a 64 × 64 buffer keeps it within bounds.
            let stride = 64
            var full = [Double](repeating: 0, count: stride * stride)
            var input = gh_channel_layout(from.mask)
            var output = gh_channel_layout(target.mask)
            let lfe = mixing.lfeGainDB.map { pow(10, $0 / 20) } ?? 0
            let status = gh_swr_build_matrix2(
                &input, &output, 0.5.squareRoot(), 0.5.squareRoot(), lfe, 1, 1, &full, stride,
                AV_MATRIX_ENCODING_NONE, nil)
            if status >= 0, source.channels <= stride, target.channels <= stride {
                let columns = source.channels
                var matrix = (0..<target.channels).flatMap { o in full[(o * stride)..<(o * stride + columns)] }
                if columns == 1, let loudest = matrix.max(), loudest > 0 { matrix = matrix.map { $0 / loudest } }
                built = matrix
            } else {
                reason = "libswresample cannot map these layouts"
            }
        }
        if let built {
            gains = built.map(Float.init)
        } else {
            var positional = [Float](repeating: 0, count: inputs * outputs)
            for c in 0..<min(inputs, outputs) { positional[c * inputs + c] = 1 }
            gains = positional
        }
        fallbackReason = reason
    }

    /// Whether `mixing` asked for a matrix this source's channels do not fit.
    static func explicitMatrixIgnored(_ mixing: ChannelMixing, source: ChannelLayout, target: ChannelLayout) -> Bool {
        guard let matrix = mixing.matrix else { return false }
        return matrix.count != target.channels || !matrix.allSatisfy { $0.count == source.channels }
    }

    /// Writes `frames` frames of `outputs` channels from `frames` frames of `inputs` channels.
    func apply(_ source: UnsafePointer<Float>, frames: Int, into destination: UnsafeMutablePointer<Float>) {
        guard let gains else {
            destination.update(from: source, count: frames * outputs)
            return
        }
        gains.withUnsafeBufferPointer { gains in
            for f in 0..<frames {
                let input = source + f * inputs
                let output = destination + f * outputs
                for o in 0..<outputs {
                    var sum: Float = 0
                    for i in 0..<inputs { sum += gains[o * inputs + i] * input[i] }
                    output[o] = sum
                }
            }
        }
    }
}
