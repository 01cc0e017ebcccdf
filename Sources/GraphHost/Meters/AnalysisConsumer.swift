/// Something that analyses what a node's analysis tap captured (control world): a `LoudnessMeter`, a spectrum
/// analyzer. `AudioAnalysis` calls it on its drain thread, under its lock, so it needs no locking of its own.
public protocol AnalysisConsumer: AnyObject {
    /// Takes `frames` interleaved frames of `channels` channels.
    func add(interleaved samples: UnsafePointer<Float>, frames: Int, channels: Int)
    /// Forgets everything added so far.
    func reset()
}
