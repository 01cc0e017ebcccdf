/// Pause and play for the whole output: a gain that fades out and in; once faded out, nothing runs
/// (streams are not pulled, so they resume where they paused).
public struct Transport {
    public var gain = SmoothedGain(1)
    public var paused = false
    public let fadeFrames: Int

    /// What a transport message asks for.
    public enum Change { case pause, play }

    public init(fadeFrames: Int) { self.fadeFrames = fadeFrames }

    @_noLocks
    mutating func apply(_ change: Change) {
        paused = change == .pause
        gain.glide(to: paused ? 0 : 1, over: fadeFrames)
    }

    /// Ends a slice where a pause's fade ends, so the graph stops at the same frame however it is sliced.
    @_noLocks
    func limit(_ frames: Int) -> Int {
        paused && gain.remaining > 0 ? min(frames, gain.remaining) : frames
    }

    var isSilent: Bool {
        @_noLocks get { paused && gain.isSteady && gain.current == 0 }
    }

    var isUnity: Bool {
        @_noLocks get { gain.isSteady && gain.current == 1 }
    }
}
