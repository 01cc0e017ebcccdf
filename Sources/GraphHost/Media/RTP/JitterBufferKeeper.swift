/// Holds an RTP receiver's jitter buffer at the latency asked for when the sender runs on the graph's clock
/// (`clock=shared`, where nothing is resampled). A stall on either side moves the buffer's level for good: a sender or
/// a network that stalls leaves it short by what was not sent, a graph that misses cycles leaves it fuller by what was
/// not played. The level is averaged over windows of half a second. Two seconds after a (re)start the buffer has
/// settled: that window's average is the level held from then on (where the phase of packets and cycles put it, up to
/// a packet and 5 ms below the target, `bufferSeconds`; the target where it settled further away). A later window that
/// ends further from it than 3 ms and a quarter of a packet (less than a quantum of 256 frames at 48 kHz) asks the
/// decoder to put the difference back (`RTPDecoder.resynchronise`): frames filled in when the buffer ran short, frames
/// left out when it ran full; the window after a correction is left out. The latest average is what `status` reports
/// as the receive latency, whether or not the keeper corrects. Whatever the clock, a buffer found overfull as a packet
/// arrives (`excess`: by a burst of packets, or a long gap filled in) is put back to the level held (the target before
/// one is) at once, and after a restart (that, or an underrun's rebuffer) the first window that ends above that level
/// by more than the tolerance is brought down to it (`isRecovering`): what the rest of a burst left. The level held
/// outlives a restart: a rebuffer starts playing wherever the phase of packets and cycles puts it, and from the second
/// window after it (the first holds the rebuffering) the buffer is put back to where it was held before, so the
/// latency does not move for good with each underrun.
struct JitterBufferKeeper {
    /// The level asked for, the level held (nil until the buffer first settled), and the latest window's average, in
    /// graph frames.
    let target: Int
    private(set) var held: Int?
    private(set) var average: Int?
    private var window: LevelWindow
    /// The window after a correction still holds some of the level before: it is left out.
    private var leaveOut = false
    /// Restarted, and no window has ended since: one that ends above the target is brought down to it.
    private(set) var isRecovering = false

    static let windowSeconds = 0.5
    static let settleWindows = 4
    /// How far from the target the buffer may settle, beyond a packet's length.
    static let settleSeconds = 0.005
    /// How far a window's average may stray from the level held, beyond a quarter of a packet: a window's average
    /// varies less, and a stall of a quantum is more.
    static let toleranceSeconds = 0.003

    init(target: Int, rate: Int) {
        self.target = target
        window = LevelWindow(seconds: Self.windowSeconds, rate: rate)
    }

    /// The buffer is taken afresh (an underrun rebuffered it, or an overfull one was put back): it returns to the
    /// level held, or settles when none is yet.
    mutating func restart() {
        window.restart()
        leaveOut = false
        isRecovering = true
    }

    /// How far beyond the target the buffer may run before it is overfull: half the target, and at least
    /// `overfullSeconds` and a packet.
    static let overfullSeconds = 0.02

    /// The frames to leave out (negative) when the buffer's `level` (graph frames) as a packet of `packetFrames`
    /// arrives is overfull, bringing it back to the level held (the target before one is); else 0. The caller then
    /// restarts the keeper.
    func excess(level: Int, packetFrames: Int) -> Int {
        let allowed = max(target / 2, Int(Self.overfullSeconds * Double(window.rate)) + packetFrames)
        return level > target + allowed ? (held ?? target) - level : 0
    }

    /// Notes the buffer's `level` as a packet of `packetFrames` arrives (graph frames). When a window closes off the
    /// level held, returns the frames to put back (positive) or leave out (negative); else 0.
    mutating func note(level: Int, packetFrames: Int) -> Int {
        guard let closed = window.add(Double(level), arriving: packetFrames) else { return 0 }
        let mean = Int(closed.average)
        average = mean
        let rate = Double(window.rate)
        let tolerance = Int(Self.toleranceSeconds * rate) + packetFrames / 4
        if isRecovering {
            isRecovering = false
            let level = held ?? target
            guard mean - level > tolerance else { return 0 }
            leaveOut = true
            return level - mean
        }
        // Once it has settled, the buffer is held from the second window after a restart.
        guard window.closed > (held == nil ? Self.settleWindows : 1), !leaveOut else {
            leaveOut = false
            return 0
        }
        let settled = abs(mean - target) <= Int(Self.settleSeconds * rate) + packetFrames
        let held = self.held ?? (settled ? mean : target)
        self.held = held
        guard abs(mean - held) > tolerance else { return 0 }
        leaveOut = true
        return held - mean
    }
}
