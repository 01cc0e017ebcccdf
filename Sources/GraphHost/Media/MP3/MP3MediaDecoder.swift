/// The MP3 path as a `MediaDecoder`: bytes read from the input in chunks, through the frame guard and libmpg123.
final class MP3MediaDecoder: MediaDecoder {
    private let input: MediaInput
    private let decoder: GuardedMP3Decoder
    private let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 16384, alignment: 16)
    private var ended = false

    init(input: MediaInput) throws {
        self.input = input
        decoder = try GuardedMP3Decoder()
    }

    deinit { chunk.deallocate() }

    var info: MediaInfo? { decoder.info }
    var tags: MediaTags? { nil }
    var damage: StreamDamage { decoder.damage }

    func decodeNext(emit: Emit) throws -> Bool {
        guard !ended else { return false }
        let n = try input.read(into: chunk)
        if input.lastReadFollowsBreak { decoder.markBreak() }
        try decoder.decode(UnsafeRawBufferPointer(rebasing: chunk[0..<n]), final: n == 0, emit: emit)
        ended = n == 0
        return !ended
    }

    /// Seeks by the byte offset libmpg123 computes for the sample (exact with a Xing/LAME table, estimated without).
    func seek(to seconds: Double) throws -> Double? {
        guard input.seekable != nil, let offset = decoder.inputOffset(forSeconds: seconds) else { return nil }
        try input.seek(to: offset.byte)
        decoder.reposition()
        ended = false
        return offset.seconds
    }
}
