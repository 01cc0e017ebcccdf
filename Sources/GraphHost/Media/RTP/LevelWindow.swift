/// A jitter buffer's level averaged over windows of arriving audio, counted from a (re)start: what the clock follower
/// and the jitter buffer's keeper both watch.
struct LevelWindow {
    /// The window's length, frames of arriving audio, and their rate.
    let length: Int
    let rate: Int
    /// Windows closed since the (re)start.
    private(set) var closed = 0
    private var sum = 0.0
    private var readings = 0
    private var frames = 0

    init(seconds: Double, rate: Int) {
        length = Int(seconds * Double(rate))
        self.rate = rate
    }

    mutating func restart() { self = LevelWindow(length: length, rate: rate) }

    private init(length: Int, rate: Int) {
        self.length = length
        self.rate = rate
    }

    /// Notes the `level` found as `arriving` frames come; when this closes a window, its average and its length in
    /// seconds.
    mutating func add(_ level: Double, arriving: Int) -> (average: Double, seconds: Double)? {
        sum += level
        readings += 1
        frames += arriving
        guard frames >= length else { return nil }
        let window = (sum / Double(readings), Double(frames) / Double(rate))
        (sum, readings, frames) = (0, 0, 0)
        closed += 1
        return window
    }
}
