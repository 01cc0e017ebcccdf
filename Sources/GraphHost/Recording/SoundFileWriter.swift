import CDitherGlue
import CSndfile
import FoundationEssentials
import Glibc
import Synchronization

/// Writes interleaved Float32 audio with libsndfile; the container follows the extension: .wav (32-bit float, or 16-
/// or 24-bit integer when `bits` asks), .flac (24-bit, or 16), .ogg (Vorbis), .opus (Ogg Opus; 48, 24, 16, 12 or
/// 8 kHz). All but float .wav hold nothing beyond full scale: their samples are clipped there, and counted
/// (`clippedSamples`). 16-bit samples are dithered (TPDF, ±1 LSB), so quiet passages keep their detail as noise
/// rather than distortion; 24-bit ones are rounded (their rounding sits below any converter's own noise). Each format
/// gets the graph's channels in its own order (`CodecChannelOrder`). A staged writer writes a hidden file beside
/// `path`, which `commit` renames to `path` and `discard` removes: a failed render leaves nothing behind.
public final class SoundFileWriter: Sendable {
    /// The file, while open, and what clipping needs; held while libsndfile uses the file.
    private struct State {
        var closed = false
        var clipped = 0
        var scratch: [Float] = []
        var shorts: [Int16] = []
        var dither: gh_dither_state = {
            var state = gh_dither_state()
            gh_dither_seed(&state, 1)
            return state
        }()
    }
    private let state = Mutex(State())
    nonisolated(unsafe) private let file: OpaquePointer
    public let path: String
    /// The file written: `path`, or the hidden file beside it of a staged writer.
    public let writingPath: String
    public let channels: Int
    /// Whether the format holds only samples within full scale.
    public let clips: Bool
    /// Whether samples are written as 16-bit integers with TPDF dither (`gh_dither_to_s16`).
    private let dithered16: Bool
    /// For each channel of the file, the graph channel written there.
    private let order: [Int]

    /// The formats by extension, for messages.
    public static let extensions = ".wav, .flac, .ogg or .opus"

    /// The bits per sample each extension can be asked for (nil: the format's own).
    public static func bitsAllowed(forExtension ext: String) -> [Int] {
        switch ext {
        case "wav": [16, 24, 32]
        case "flac": [16, 24]
        default: []
        }
    }

    /// `bits`: 16, 24 or 32 (float) for .wav, 16 or 24 for .flac; nil for the format's own (.wav 32-bit float, .flac
    /// 24-bit).
    public init(path: String, sampleRate: Int, channels: Int, bits: Int? = nil, staged: Bool = false) throws {
        let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
        if let bits, !Self.bitsAllowed(forExtension: ext).contains(bits) {
            let allowed = Self.bitsAllowed(forExtension: ext).map(String.init).joined(separator: ", ")
            throw RecordingError.cannotWrite(
                path: path,
                reason: allowed.isEmpty
                    ? "\(bits) bits: a .\(ext) file has no bits per sample to choose"
                    : "\(bits) bits: a .\(ext) file takes \(allowed)")
        }
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        let pcm = bits == 16 ? SF_FORMAT_PCM_16 : bits == 24 ? SF_FORMAT_PCM_24 : SF_FORMAT_FLOAT
        switch ext {
        case "wav": info.format = Int32((channels > 2 ? SF_FORMAT_WAVEX : SF_FORMAT_WAV) | pcm)
        case "flac": info.format = Int32(SF_FORMAT_FLAC | (bits == 16 ? SF_FORMAT_PCM_16 : SF_FORMAT_PCM_24))
        case "ogg": info.format = Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)
        case "opus":
            guard [48000, 24000, 16000, 12000, 8000].contains(sampleRate) else {
                throw RecordingError.cannotWrite(
                    path: path,
                    reason: "Opus takes 48000, 24000, 16000, 12000 or 8000 Hz, and the graph runs at \(sampleRate) Hz")
            }
            info.format = Int32(SF_FORMAT_OGG | SF_FORMAT_OPUS)
        default:
            throw RecordingError.cannotWrite(path: path, reason: "unknown extension '.\(ext)' (use \(Self.extensions))")
        }
        let url = URL(fileURLWithPath: path)
        writingPath =
            staged
            ? url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid()).part").path
            : path
        guard let f = sf_open(writingPath, Int32(SFM_WRITE), &info) else {
            throw RecordingError.cannotWrite(path: path, reason: "\(String(cString: sf_strerror(nil)))")
        }
        // No PEAK chunk: libsndfile would scan every sample for it, and the render reports the peak itself.
        if ext == "wav" { sf_command(f, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE)) }
        if ext == "wav", channels > 2, var map = CodecChannelOrder.sndfileMap(channels: channels) {
            sf_command(f, Int32(SFC_SET_CHANNEL_MAP_INFO), &map, Int32(map.count * MemoryLayout<Int32>.size))
        }
        file = f
        self.path = path
        self.channels = channels
        clips = ext != "wav" || pcm != SF_FORMAT_FLOAT
        dithered16 = bits == 16
        order = ext == "ogg" || ext == "opus" ? CodecChannelOrder.vorbis(channels: channels) : Array(0..<channels)
    }

    public func write(_ samples: UnsafePointer<Float>, frames: Int) throws {
        try state.withLock { state in
            guard !state.closed else { throw RecordingError.writeFailed(path: path, reason: "the file is closed") }
            let count = frames * channels
            let written: sf_count_t
            if dithered16 {
                if state.shorts.count < count { state.shorts = [Int16](repeating: 0, count: count) }
                var clipped = 0
                written = state.shorts.withUnsafeMutableBufferPointer { out in
                    clipped = gh_dither_to_s16(&state.dither, samples, count, out.baseAddress!)
                    return sf_writef_short(file, out.baseAddress, sf_count_t(frames))
                }
                state.clipped += clipped
            } else if clips {
                if state.scratch.count < count { state.scratch = [Float](repeating: 0, count: count) }
                var clipped = 0
                written = state.scratch.withUnsafeMutableBufferPointer { out in
                    for f in 0..<frames {
                        for (c, from) in order.enumerated() {
                            let x = samples[f * channels + from]
                            let i = f * channels + c
                            if x > 1 {
                                out[i] = 1
                                clipped += 1
                            } else if x < -1 {
                                out[i] = -1
                                clipped += 1
                            } else {
                                out[i] = x
                            }
                        }
                    }
                    return sf_writef_float(file, out.baseAddress, sf_count_t(frames))
                }
                state.clipped += clipped
            } else {
                written = sf_writef_float(file, samples, sf_count_t(frames))
            }
            if written != frames {
                throw RecordingError.writeFailed(path: path, reason: "\(String(cString: sf_strerror(file)))")
            }
        }
    }

    /// Samples clipped at full scale so far (formats other than float .wav).
    public var clippedSamples: Int { state.withLock { $0.clipped } }

    /// Finishes the file; later writes fail.
    public func close() {
        state.withLock { state in
            if !state.closed { sf_close(file) }
            state.closed = true
        }
    }

    /// Finishes the file and, when staged, moves it to `path`.
    public func commit() throws {
        close()
        guard writingPath != path else { return }
        if rename(writingPath, path) != 0 {
            let why = String(cString: strerror(errno))
            unlink(writingPath)
            throw RecordingError.cannotWrite(path: path, reason: "\(why)")
        }
    }

    /// Closes and removes the file written (a staged writer's hidden file, or `path` itself).
    public func discard() {
        close()
        unlink(writingPath)
    }
}

/// Reads a whole sound file as interleaved Float32 (for tests and tools).
public struct SoundFile {
    public var sampleRate: Int
    public var channels: Int
    public var samples: [Float]
    public var frames: Int { samples.count / max(channels, 1) }

    public init(path: String) throws {
        var info = SF_INFO()
        guard let f = sf_open(path, Int32(SFM_READ), &info) else {
            throw RecordingError.cannotRead(path: path, reason: "\(String(cString: sf_strerror(nil)))")
        }
        defer { sf_close(f) }
        sampleRate = Int(info.samplerate)
        channels = Int(info.channels)
        samples = Array(repeating: 0, count: Int(info.frames) * channels)
        let n = samples.withUnsafeMutableBufferPointer { sf_readf_float(f, $0.baseAddress, info.frames) }
        samples.removeLast(samples.count - Int(n) * channels)
    }
}
