/// Silences decoded audio that cannot be music: a damaged MP3 frame that still passes mpg123's sync
/// check can decode to huge values. Each granule-sized block (576 frames) holding a non-finite sample
/// or one beyond ±2.0 (+6 dBFS, far above any codec overshoot) is replaced by silence.
enum CorruptAudioGuard {
    static let blockFrames = 576
    static let ceiling: Float = 2.0

    @discardableResult
    static func muteImplausibleBlocks(_ samples: UnsafeMutablePointer<Float>, frames: Int, channels: Int) -> Int {
        var muted = 0
        var start = 0
        while start < frames {
            let count = min(blockFrames, frames - start) * channels
            let block = samples + start * channels
            var plausible = true
            for i in 0..<count where !(abs(block[i]) <= ceiling) { plausible = false; break }
            if !plausible {
                block.update(repeating: 0, count: count)
                muted += 1
            }
            start += blockFrames
        }
        return muted
    }
}
