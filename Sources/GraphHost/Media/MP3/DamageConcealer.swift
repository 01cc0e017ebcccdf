import FoundationEssentials
import Glibc

/// Mutes decoded audio where a silenced frame's damage reaches, with short fades either side.
///
/// A frame decoded as silence still leaves the decoder's filter bank without the overlap that cancels time-domain
/// aliasing, in its own granules and the next: left alone that audio can come out louder than the music around it.
/// The concealer holds back `fadeFrames` of audio so it can fade out before the damaged span, mutes the span and
/// fades back in after it (raised-cosine gains, never above 1).
final class DamageConcealer {
    let channels: Int
    private let fadeFrames = 128
    private var held: [Float] = []
    private var muteRemaining = 0
    /// Frames of fade-in done since the last mute (`fadeFrames` when none is due).
    private var fadedIn: Int

    init(channels: Int) {
        self.channels = channels
        fadedIn = fadeFrames
    }

    /// The next `frames` frames given to `process` are damaged.
    func conceal(frames: Int) {
        let count = held.count / channels
        for f in 0..<count {
            let gain = RaisedCosine.gain(count - f, of: count + 1)
            for c in 0..<channels { held[f * channels + c] *= gain }
        }
        muteRemaining = max(muteRemaining, frames)
    }

    /// Takes `frames` interleaved frames and passes on all but the last `fadeFrames` held so far.
    func process(_ samples: UnsafeMutablePointer<Float>, frames: Int, emit: (UnsafePointer<Float>, Int) throws -> Void)
        rethrows
    {
        var f = 0
        // Frame by frame only while a mute or a fade-in is under way; healthy audio passes untouched.
        while f < frames && (muteRemaining > 0 || fadedIn < fadeFrames) {
            let gain: Float
            if muteRemaining > 0 {
                muteRemaining -= 1
                fadedIn = 0
                gain = 0
            } else {
                gain = RaisedCosine.gain(fadedIn + 1, of: fadeFrames + 1)
                fadedIn += 1
            }
            for c in 0..<channels { samples[f * channels + c] *= gain }
            f += 1
        }
        // What is passed on comes from the held frames first, then straight from `samples`; only the last
        // `fadeFrames` are copied to be held.
        let heldFrames = held.count / channels
        let out = heldFrames + frames - fadeFrames
        guard out > 0 else {
            held.append(contentsOf: UnsafeBufferPointer(start: samples, count: frames * channels))
            return
        }
        let fromHeld = min(out, heldFrames)
        if fromHeld > 0 { try held.withUnsafeBufferPointer { try emit($0.baseAddress!, fromHeld) } }
        let fromSamples = out - fromHeld
        if fromSamples > 0 { try emit(samples, fromSamples) }
        held.removeFirst(fromHeld * channels)
        held.append(
            contentsOf: UnsafeBufferPointer(
                start: samples + fromSamples * channels, count: (frames - fromSamples) * channels))
    }

    /// Passes on what is held (the end of the stream).
    func flush(emit: (UnsafePointer<Float>, Int) throws -> Void) rethrows {
        if !held.isEmpty { try held.withUnsafeBufferPointer { try emit($0.baseAddress!, held.count / channels) } }
        held.removeAll(keepingCapacity: true)
    }
}
