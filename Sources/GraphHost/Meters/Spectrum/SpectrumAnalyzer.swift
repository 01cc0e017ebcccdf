import Glibc
import Synchronization

/// The spectrum of one node's audio in 1/6-octave bands (`SpectrumBands`), for the control world.
///
/// Every `hop` frames (30 analyses a second) the latest `fftSize` frames of each channel are Hann windowed and
/// transformed; the channels' power spectra are averaged, so a signal reads the same in mono and in stereo. A band's
/// power is the power spectral density integrated between its edges (bins at an edge count with the fraction of their
/// width inside), so a band narrower than a bin still reads the power of its own width.
///
/// Levels are dB relative to a full-scale sine: a sine of amplitude 1 (mean square ½) reads 0 dB in its band, one at
/// -6 dBFS reads -6 dB. The window's power gain is compensated, so a band reads the power within its edges of a sine
/// and of a noise alike.
/// `reading()` is an exponential average of the analyses' band powers with a time constant of 300 ms; `average()` is
/// the mean of every full analysis since the start or the last `reset()`. Powers below `floor` read -infinity (no NaN:
/// non-finite input samples count as silence).
///
/// `add` and `reset` are called from one thread at a time; `reading` and `average` from any thread.
public final class SpectrumAnalyzer: AnalysisConsumer, @unchecked Sendable {
    /// Analyses a second.
    public static let updatesPerSecond = 30.0
    /// The time constant of `reading()`'s exponential average.
    public static let smoothingSeconds = 0.3
    /// Levels below this read -infinity, dB.
    public static let floor = -150.0

    public let sampleRate: Double
    /// The channels of the latest `add`.
    public private(set) var channels: Int
    /// The smallest power of two of at least a third of a second: 16384 frames at 44.1 and 48 kHz, bins 2.7 and
    /// 2.9 Hz apart, about the width of the lowest band (2.3 Hz).
    public let fftSize: Int
    /// Frames between analyses: a thirtieth of a second (1600 at 48 kHz, a 90 % overlap of 16384-frame windows).
    public let hop: Int
    public let bands: SpectrumBands

    private let fft: RealFFT
    private let window: [Float]
    /// Each band's first bin and bin weights, scaled so the weighted sum of one channel's |X|² is that channel's band
    /// power over a full-scale sine's.
    private let binWeights: [(firstBin: Int, weights: [Double])]
    private let smoothing: Double
    /// The latest `fftSize` frames of each channel, a ring per channel starting at `ringStart`.
    private var history: [Float]
    private var ringStart = 0
    private var framesToAnalysis: Int
    /// Frames since the start, up to `fftSize`: the window is full when it reaches it.
    private var framesSeen = 0
    private var binPower: [Double]
    private var bandPower: [Double]
    private let published: Mutex<Published>

    private struct Published {
        var smoothed: [Double]
        var sum: [Double]
        var analyses = 0
    }

    public init(sampleRate: Double, channels: Int) {
        precondition(sampleRate > 0 && channels > 0, "SpectrumAnalyzer: \(sampleRate) Hz, \(channels) channels")
        self.sampleRate = sampleRate
        self.channels = channels
        var size = 2
        while Double(size) < sampleRate / 3 { size *= 2 }
        fftSize = size
        hop = max(1, Int((sampleRate / Self.updatesPerSecond).rounded()))
        bands = SpectrumBands(sampleRate: sampleRate)
        fft = RealFFT(size: size)
        window = (0..<size).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size))) }
        // One-sided power of bin k: 2|X_k|² / (N · Σw²); a full-scale sine's power is ½.
        let windowPower = window.reduce(0.0) { $0 + Double($1) * Double($1) }
        let scale = 4 / (Double(size) * windowPower)
        binWeights = bands.binWeights(fftSize: size, sampleRate: sampleRate).map {
            ($0.firstBin, $0.weights.map { $0 * scale })
        }
        smoothing = 1 - exp(-Double(hop) / (sampleRate * Self.smoothingSeconds))
        history = Array(repeating: 0, count: size * channels)
        framesToAnalysis = hop
        binPower = Array(repeating: 0, count: size / 2 + 1)
        bandPower = Array(repeating: 0, count: bands.centers.count)
        published = Mutex(Published(smoothed: bandPower, sum: bandPower))
    }

    /// Adds `frames` frames of `channels` interleaved samples; a channel count other than the last one's starts
    /// afresh with the new count.
    public func add(interleaved samples: UnsafePointer<Float>, frames: Int, channels: Int) {
        precondition(channels > 0, "SpectrumAnalyzer.add: \(channels) channels")
        if channels != self.channels {
            self.channels = channels
            reset()
        }
        var done = 0
        while done < frames {
            let count = min(frames - done, framesToAnalysis, fftSize - ringStart)
            history.withUnsafeMutableBufferPointer { history in
                for channel in 0..<channels {
                    let ring = history.baseAddress! + channel * fftSize + ringStart
                    var sample = samples + done * channels + channel
                    for i in 0..<count {
                        ring[i] = sample.pointee.isFinite ? sample.pointee : 0
                        sample += channels
                    }
                }
            }
            done += count
            ringStart = (ringStart + count) % fftSize
            framesSeen = min(fftSize, framesSeen + count)
            framesToAnalysis -= count
            if framesToAnalysis == 0 {
                framesToAnalysis = hop
                analyze()
            }
        }
    }

    /// Forgets all audio: every band reads -infinity until the next analysis.
    public func reset() {
        history = Array(repeating: 0, count: fftSize * channels)
        ringStart = 0
        framesToAnalysis = hop
        framesSeen = 0
        published.withLock { $0 = Published(smoothed: bandPower.map { _ in 0 }, sum: bandPower.map { _ in 0 }) }
    }

    /// The bands' levels, averaged over about the last 300 ms.
    public func reading() -> [RunStatus.SpectrumBand] {
        levels(published.withLock { $0.smoothed })
    }

    /// The bands' levels averaged over every analysis of a full window since the start or the last `reset()`.
    public func average() -> [RunStatus.SpectrumBand] {
        let (sum, analyses) = published.withLock { ($0.sum, $0.analyses) }
        return levels(sum.map { analyses > 0 ? $0 / Double(analyses) : 0 })
    }

    private func levels(_ powers: [Double]) -> [RunStatus.SpectrumBand] {
        let floorPower = pow(10, Self.floor / 10)
        return zip(bands.centers, powers).map { center, power in
            RunStatus.SpectrumBand(
                center: center, level: power.isFinite && power >= floorPower ? 10 * log10(power) : -.infinity)
        }
    }

    private func analyze() {
        for bin in binPower.indices { binPower[bin] = 0 }
        let tail = fftSize - ringStart
        history.withUnsafeBufferPointer { history in
            window.withUnsafeBufferPointer { window in
                for channel in 0..<channels {
                    let ring = history.baseAddress! + channel * fftSize
                    for i in 0..<tail { fft.input[i] = ring[ringStart + i] * window[i] }
                    for i in 0..<ringStart { fft.input[tail + i] = ring[i] * window[tail + i] }
                    fft.transform()
                    for bin in binPower.indices { binPower[bin] += Double(fft.power(bin)) }
                }
            }
        }
        for (band, share) in binWeights.enumerated() {
            var power = 0.0
            for (i, weight) in share.weights.enumerated() { power += weight * binPower[share.firstBin + i] }
            bandPower[band] = power / Double(channels)
        }
        let full = framesSeen == fftSize
        published.withLock {
            for band in bandPower.indices {
                $0.smoothed[band] += smoothing * (bandPower[band] - $0.smoothed[band])
                if full { $0.sum[band] += bandPower[band] }
            }
            if full { $0.analyses += 1 }
        }
    }
}
