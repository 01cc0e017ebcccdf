import CMPG123

/// A libmpg123 handle in feed mode that decodes to interleaved Float32 at the stream's own rate.
final class MP3Decoder {
    private let handle: OpaquePointer
    private(set) var sampleRate = 0
    private(set) var channels = 0

    static let initialized: Bool = { mpg123_init(); return true }()

    init() throws {
        _ = Self.initialized
        var error: Int32 = 0
        guard let h = mpg123_new(nil, &error) else { throw StreamError.decoder("cannot create a handle (\(error))") }
        handle = h
        mpg123_param2(h, Int32(MPG123_ADD_FLAGS.rawValue), Int(MPG123_QUIET.rawValue), 0)
        mpg123_param2(h, Int32(MPG123_RESYNC_LIMIT.rawValue), -1, 0)
        mpg123_format_none(h)
        var rates: UnsafePointer<Int>?
        var count = 0
        mpg123_rates(&rates, &count)
        for i in 0..<count {
            mpg123_format(h, rates![i], Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue), Int32(MPG123_ENC_FLOAT_32.rawValue))
        }
        try restart()
    }

    deinit { mpg123_delete(handle) }

    /// Starts a new stream (also after the end of one, for looping).
    func restart() throws {
        guard mpg123_open_feed(handle) == MPG123_OK.rawValue else { throw StreamError.decoder(lastError) }
    }

    private var lastError: String { String(cString: mpg123_strerror(handle)) }

    func feed(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        _ = mpg123_feed(handle, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    enum Result { case frames(Int), needMore }

    /// Decodes into `output` (interleaved floats); returns the frames written or `.needMore`.
    func decode(into output: UnsafeMutableBufferPointer<Float>) -> Result {
        while true {
            var bytes = 0
            let status = mpg123_read(handle, UnsafeMutableRawPointer(output.baseAddress!), output.count * 4, &bytes)
            if status == MPG123_NEW_FORMAT.rawValue {
                var rate = 0, ch: Int32 = 0, enc: Int32 = 0
                mpg123_getformat(handle, &rate, &ch, &enc)
                sampleRate = rate
                channels = Int(ch)
            }
            if bytes > 0 { return .frames(bytes / 4 / max(channels, 1)) }
            if status != MPG123_NEW_FORMAT.rawValue { return .needMore }
        }
    }

    /// Checks that the first bytes of `source` hold MPEG audio; returns its rate and channels.
    static func probe(_ source: ByteSource) throws -> (rate: Int, channels: Int) {
        let decoder = try MP3Decoder()
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 16384, alignment: 16)
        let pcm = UnsafeMutableBufferPointer<Float>.allocate(capacity: 8192)
        defer { chunk.deallocate(); pcm.deallocate() }
        var total = 0
        while total < 1 << 20 {
            let n = try source.read(into: chunk)
            if n == 0 { break }
            total += n
            decoder.feed(UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
            if case .frames = decoder.decode(into: pcm), decoder.sampleRate > 0 {
                return (decoder.sampleRate, decoder.channels)
            }
        }
        throw StreamError.notMP3(source.name)
    }
}
