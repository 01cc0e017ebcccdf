import CSndfile
import Synchronization

/// Writes interleaved Float32 audio with libsndfile; the container follows the extension
/// (.wav: 32-bit float, .flac: 24-bit, clipped at full scale).
public final class SoundFileWriter: Sendable {
    /// True once closed; held while libsndfile uses `file`, which is read only under it.
    private let closed = Mutex(false)
    nonisolated(unsafe) private let file: OpaquePointer
    public let path: String
    public let channels: Int

    public init(path: String, sampleRate: Int, channels: Int) throws {
        let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        switch ext {
        case "wav": info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT)
        case "flac": info.format = Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_24)
        default: throw CommandError("cannot write '\(path)': unknown extension '.\(ext)' (use .wav or .flac)")
        }
        guard let f = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw CommandError("cannot write '\(path)': \(String(cString: sf_strerror(nil)))")
        }
        // Integer formats clip samples beyond full scale instead of failing the write.
        if ext == "flac" { sf_command(f, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE)) }
        file = f
        self.path = path
        self.channels = channels
    }

    public func write(_ samples: UnsafePointer<Float>, frames: Int) throws {
        try closed.withLock { closed in
            guard !closed else { throw CommandError("writing '\(path)' failed: the file is closed") }
            let written = sf_writef_float(file, samples, sf_count_t(frames))
            if written != frames { throw CommandError("writing '\(path)' failed: \(String(cString: sf_strerror(file)))") }
        }
    }

    /// Finishes the file; later writes fail.
    public func close() {
        closed.withLock { closed in
            if !closed { sf_close(file) }
            closed = true
        }
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
            throw CommandError("cannot read '\(path)': \(String(cString: sf_strerror(nil)))")
        }
        defer { sf_close(f) }
        sampleRate = Int(info.samplerate)
        channels = Int(info.channels)
        samples = Array(repeating: 0, count: Int(info.frames) * channels)
        let n = samples.withUnsafeMutableBufferPointer { sf_readf_float(f, $0.baseAddress, info.frames) }
        samples.removeLast(samples.count - Int(n) * channels)
    }
}
