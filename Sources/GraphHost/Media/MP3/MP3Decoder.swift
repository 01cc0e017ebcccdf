import CMPG123
import Glibc

/// A libmpg123 handle in feed mode that decodes to interleaved Float32 at the stream's own rate.
final class MP3Decoder {
    private let handle: OpaquePointer
    private(set) var sampleRate = 0
    private(set) var channels = 0

    static let initialized: Bool = {
        mpg123_init()
        return true
    }()

    init() throws {
        _ = Self.initialized
        var error: Int32 = 0
        guard let h = mpg123_new(nil, &error) else {
            throw StreamError.decoder("libmpg123 cannot create a handle (\(error))")
        }
        handle = h
        mpg123_param2(h, Int32(MPG123_ADD_FLAGS.rawValue), Int(MPG123_QUIET.rawValue), 0)
        mpg123_param2(h, Int32(MPG123_RESYNC_LIMIT.rawValue), -1, 0)
        mpg123_format_none(h)
        var rates: UnsafePointer<Int>?
        var count = 0
        mpg123_rates(&rates, &count)
        for i in 0..<count {
            mpg123_format(
                h, rates![i], Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue), Int32(MPG123_ENC_FLOAT_32.rawValue))
        }
        try restart()
    }

    deinit { mpg123_delete(handle) }

    /// Starts a new stream (also after the end of one, for looping).
    func restart() throws {
        guard mpg123_open_feed(handle) == MPG123_OK.rawValue else {
            throw StreamError.decoder("libmpg123: " + lastError)
        }
    }

    private var lastError: String { String(cString: mpg123_strerror(handle)) }

    func feed(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        _ = mpg123_feed(handle, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    /// The current frame's bit rate in bits per second (0 before the first frame).
    var bitRate: Int {
        var frame = mpg123_frameinfo2()
        return mpg123_info2(handle, &frame) == MPG123_OK.rawValue ? Int(frame.bitrate) * 1000 : 0
    }

    /// Prepares a seek to `sample` (at the stream's rate): the byte offset the next bytes fed must come from, and the
    /// sample the output then starts at. libmpg123 decodes from the nearest frame it indexed and drops what lies
    /// before.
    func feedSeek(toSample sample: Int) -> (byte: Int, sample: Int)? {
        var byte: off_t = 0
        let reached = mpg123_feedseek(handle, off_t(sample), SEEK_SET, &byte)
        return reached >= 0 ? (Int(byte), Int(reached)) : nil
    }

    enum Result {
        /// Interleaved floats in libmpg123's own buffer, valid (and writable) until the next call.
        case frames(UnsafeMutablePointer<Float>, Int)
        case needMore
    }

    /// Decodes the next frame, if the bytes fed hold it: its frames, or `.needMore`. No copy: the samples are
    /// libmpg123's output buffer.
    func decode() -> Result {
        while true {
            var number: off_t = 0
            var audio: UnsafeMutablePointer<UInt8>?
            var bytes = 0
            let status = mpg123_decode_frame(handle, &number, &audio, &bytes)
            if status == MPG123_NEW_FORMAT.rawValue {
                var rate = 0
                var ch: Int32 = 0
                var enc: Int32 = 0
                mpg123_getformat(handle, &rate, &ch, &enc)
                sampleRate = rate
                channels = Int(ch)
            }
            if bytes > 0, let audio {
                return .frames(
                    UnsafeMutableRawPointer(audio).assumingMemoryBound(to: Float.self), bytes / 4 / max(channels, 1))
            }
            if status != MPG123_NEW_FORMAT.rawValue && status != MPG123_OK.rawValue { return .needMore }
        }
    }
}
