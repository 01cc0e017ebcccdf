/// Follows a remote sender's clock. An RTP sender whose clock runs faster or slower than the graph's slowly fills or
/// drains the jitter buffer; this resamples the session's audio (libsoxr's variable-rate mode, high quality) by a ratio
/// a PI loop sets from the buffer's level (its average over each second), which holds the buffer where it settled. A
/// stream opts out with `clock=shared` (a sender on the graph's own clock, as with a common PTP clock), which is then
/// never resampled. After an underrun the buffer is taken afresh (`restart`); the clock's correction stays. Runs on
/// the stream's decoder thread.
final class ClockFollower {
    let channels: Int
    /// The session's frames per second (what `pass` takes).
    let rate: Int
    private let resampler: Resampler?
    private let scratch: UnsafeMutableBufferPointer<Float>
    private var window: LevelWindow
    /// Where the buffer settled, in seconds.
    private(set) var reference: Double?
    private var integral = 0.0
    /// The share of frames the resampler takes away (positive: the sender is fast): output = input · (1 − correction).
    private(set) var correction = 0.0

    static let windowSeconds = 1.0
    /// Windows left out after a (re)start: the buffer settles.
    static let settleWindows = 2
    static let proportional = 0.3
    static let integralGain = 0.03
    static let maxCorrection = 0.005

    init(channels: Int, rate: Int) {
        self.channels = channels
        self.rate = rate
        window = LevelWindow(seconds: Self.windowSeconds, rate: rate)
        scratch = .allocate(capacity: 8192 * channels)
        resampler = try? Resampler(variableChannels: channels, maxRatio: 1 / (1 - 2 * Self.maxCorrection))
    }

    deinit { scratch.deallocate() }

    /// The buffer is taken afresh (after an underrun rebuffered it); the clock's correction stays.
    func restart() {
        reference = nil
        window.restart()
    }

    /// Passes `frames` interleaved frames on to `emit`, resampled to follow the sender's clock, given
    /// `bufferedSeconds` waiting for playback.
    func pass(
        _ samples: UnsafePointer<Float>, frames: Int, bufferedSeconds: Double,
        emit: (UnsafePointer<Float>, Int) throws -> Void
    ) throws {
        measure(bufferedSeconds, frames: frames)
        guard let resampler else { return try emit(samples, frames) }
        var failure: Error?
        resampler.process(samples, frames: frames, scratch: scratch) { out, n in
            guard failure == nil else { return }
            do { try emit(out, n) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    private func measure(_ buffered: Double, frames: Int) {
        guard let (average, seconds) = window.add(buffered, arriving: frames), window.closed > Self.settleWindows
        else { return }
        guard let reference else {
            self.reference = average
            return
        }
        let error = average - reference
        integral += error * seconds
        correction = min(
            Self.maxCorrection, max(-Self.maxCorrection, Self.proportional * error + Self.integralGain * integral))
        resampler?.setRatio(1 / (1 - correction), slew: rate / 4)
    }
}
