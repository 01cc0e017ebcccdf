/// The MPEG audio frames that follow one another from an offset of some bytes, and what they say about the bytes.
///
/// MPEG audio has no signature: any 0xFF byte may start what reads as a frame header, and binary data (executables,
/// libraries) holds runs of up to ten such "frames" in a row by chance. Like libavformat's probe, a stream is taken
/// for MPEG audio only where its frames run on: `minimumFrames` headers of one stream in a row, or frames that run
/// exactly to the end of a short file (or into its closing tag).
struct MPEGFrameRun {
    enum Verdict: Equatable {
        /// Frames of one stream run on long enough.
        case audio
        /// The frames so far run to the end of the bytes looked at: more bytes can tell.
        case cut
        case notAudio
    }

    /// Frames of one stream in a row that make a stream MPEG audio.
    static var minimumFrames: Int { 16 }

    /// Whole frames in the run.
    private(set) var frames = 0
    let verdict: Verdict

    /// The run starting at `offset` of `bytes`; `whole` says `bytes` is all the stream holds.
    init(_ bytes: [UInt8], at offset: Int, whole: Bool) {
        var frames = 0
        var position = offset
        var key: UInt32?
        var mono = false
        let end: Bool = bytes.withUnsafeBufferPointer { p in
            while position + 4 <= p.count, frames < Self.minimumFrames {
                guard let header = MPEGFrameHeader(p.baseAddress! + position),
                    key == nil || header.streamKey == key && header.isMono == mono
                else { return false }
                key = header.streamKey
                mono = header.isMono
                guard position + header.length <= p.count else { return true }
                position += header.length
                frames += 1
            }
            return position + 4 > p.count
        }
        self.frames = frames
        if frames >= Self.minimumFrames {
            verdict = .audio
        } else if end && !whole && (frames > 0 || key != nil) {
            verdict = .cut
        } else if whole && frames >= 2 && (position == bytes.count || Self.tagFollows(bytes, at: position)) {
            verdict = .audio
        } else {
            verdict = .notAudio
        }
    }

    /// An ID3v1 or APEv2 tag starts at `offset` (what a file's last frame may be followed by).
    private static func tagFollows(_ bytes: [UInt8], at offset: Int) -> Bool {
        let rest = bytes[offset...]
        return rest.starts(with: Array("TAG".utf8)) || rest.starts(with: Array("APETAGEX".utf8))
    }
}
