/// Stands between a byte source and libmpg123 and passes on only frames that belong to one unbroken stream.
///
/// A frame is passed on when the next frame's header follows exactly at its end (or the stream or a tag ends
/// there); bytes that are not such a frame (junk, a cut frame at a splice or a reconnect) are dropped. A layer III
/// frame whose side information cannot be right is passed on silenced (side information zeroed, CRC renewed,
/// main data kept for the frames that share its reservoir): a CRC that does not match, a forbidden field value,
/// main data that would reach into the next frame's or past its own frame, main data that lies before a
/// discontinuity, and the first frame after a discontinuity (so two streams never overlap in the decoder's
/// filter bank). Free-format streams are passed through unchecked. Clean streams pass unchanged.
final class MPEGFrameGuard {
    /// Bytes dropped between frames after playback began (resynchronisations).
    private(set) var skippedBytes = 0
    /// Frames passed on silenced because their side information was damaged or their main data was lost.
    private(set) var silencedFrames = 0

    private var pending: [UInt8] = []
    private var cursor = 0
    private var skipRun = 0
    /// Bytes of an ID3v2 tag still to drop.
    private var tagRemaining = 0
    /// Valid bit-reservoir bytes before the current frame's main data area.
    private var reservoir = 0
    private var emittedAny = false
    private var afterDiscontinuity = false
    private var silenceNext = false
    private var passThrough = false

    /// Forgets the stream (a new one starts: looping or restarting).
    func reset() {
        pending.removeAll(keepingCapacity: true)
        cursor = 0
        skipRun = 0
        tagRemaining = 0
        reservoir = 0
        emittedAny = false
        afterDiscontinuity = false
        silenceNext = false
        passThrough = false
    }

    /// Appends the frames complete in `input` (plus what was held back before) to `output`; `final` says the
    /// stream ends after `input`, so the last frame needs no successor.
    func filter(_ input: UnsafeRawBufferPointer, final: Bool, into output: inout [UInt8]) {
        if passThrough {
            output.append(contentsOf: input)
            return
        }
        pending.append(contentsOf: input)
        pending.withUnsafeMutableBufferPointer { scan($0, final: final, into: &output) }
        if passThrough {
            output.append(contentsOf: pending[cursor...])
            cursor = pending.count
        }
        pending.removeSubrange(0..<cursor)
        cursor = 0
    }

    private func scan(_ bytes: UnsafeMutableBufferPointer<UInt8>, final: Bool, into output: inout [UInt8]) {
        let base = bytes.baseAddress!, count = bytes.count
        while cursor < count {
            if tagRemaining > 0 {
                let n = min(tagRemaining, count - cursor)
                cursor += n
                tagRemaining -= n
                continue
            }
            guard count - cursor >= 10 || final && count - cursor >= 4 else {
                if final { cursor = count }
                return
            }
            let here = base + cursor
            if let tag = Self.id3v2Length(here, available: count - cursor) {
                tagRemaining = tag
                continue
            }
            let header: MPEGFrameHeader
            switch MPEGFrameHeader.read(here) {
            case .header(let h): header = h
            case .freeFormat where !emittedAny:
                passThrough = true
                return
            default:
                skip()
                continue
            }
            let end = cursor + header.length
            guard end + 4 <= count || final else { return }
            let next = end + 4 <= count ? MPEGFrameHeader(base + end) : nil
            let streamEnds = final && end == count || end + 4 <= count && Self.isTag(base + end)
            guard end <= count, streamEnds || next?.streamKey == header.streamKey else {
                skip()
                continue
            }
            if header.layer == 3 {
                var nextSideInfo: LayerIIISideInfo?
                if let next, !streamEnds {
                    if end + next.prefixLength <= count {
                        nextSideInfo = LayerIIISideInfo(base + end, header: next)
                    } else if !final {
                        return
                    }
                }
                checkLayerIII(here, header: header, next: nextSideInfo)
            }
            output.append(contentsOf: UnsafeBufferPointer(start: here, count: header.length))
            if skipRun > 0 && emittedAny { skippedBytes += skipRun }
            skipRun = 0
            emittedAny = true
            cursor = end
        }
        if final { cursor = count }
    }

    /// Drops one byte that does not start a frame of the stream.
    private func skip() {
        cursor += 1
        skipRun += 1
        reservoir = 0
        afterDiscontinuity = emittedAny
    }

    /// Silences the layer III frame at `frame` when its side information cannot be right; `next` is its
    /// successor's side information when one follows.
    private func checkLayerIII(_ frame: UnsafeMutablePointer<UInt8>, header: MPEGFrameHeader, next: LayerIIISideInfo?) {
        let side = LayerIIISideInfo(frame, header: header)
        let area = header.length - header.prefixLength
        let start = -side.mainDataBegin * 8
        let end = start + side.mainDataBits
        var damaged = silenceNext || !side.isPlausible || end > area * 8
        if header.hasCRC && MPEGFrameHeader.crc(frame, sideInfoLength: header.sideInfoLength) != UInt16(frame[4]) << 8 | UInt16(frame[5]) {
            damaged = true
        }
        silenceNext = false
        if let next, end > (area - next.mainDataBegin) * 8 {
            damaged = true
            silenceNext = true       // one of the two frames' fields is wrong: neither is trusted
        }
        let lost = side.mainDataBegin > reservoir && (side.mainDataBits > 0 || afterDiscontinuity)
        if damaged || lost || afterDiscontinuity {
            (frame + header.prefixLength - header.sideInfoLength).update(repeating: 0, count: header.sideInfoLength)
            if header.hasCRC {
                let crc = MPEGFrameHeader.crc(frame, sideInfoLength: header.sideInfoLength)
                frame[4] = UInt8(crc >> 8)
                frame[5] = UInt8(crc & 0xFF)
            }
            if damaged || afterDiscontinuity { silencedFrames += 1 }
        }
        afterDiscontinuity = false
        reservoir = min(reservoir + area, 4096)
    }

    /// The length of an ID3v2 tag starting at `bytes` (header, body, footer), or nil when none starts there.
    private static func id3v2Length(_ b: UnsafePointer<UInt8>, available: Int) -> Int? {
        guard available >= 10, b[0] == 0x49, b[1] == 0x44, b[2] == 0x33, b[3] != 0xFF, b[4] != 0xFF,
              b[6] & 0x80 | b[7] & 0x80 | b[8] & 0x80 | b[9] & 0x80 == 0 else { return nil }
        let size = Int(b[6]) << 21 | Int(b[7]) << 14 | Int(b[8]) << 7 | Int(b[9])
        return 10 + size + (b[5] & 0x10 != 0 ? 10 : 0)
    }

    /// True when a tag (ID3v1 "TAG", ID3v2 "ID3", APEv2 "APETAGEX", Lyrics3 "LYRICS") starts at `bytes`.
    private static func isTag(_ b: UnsafePointer<UInt8>) -> Bool {
        let prefix = String(decoding: UnsafeBufferPointer(start: b, count: 4), as: UTF8.self)
        return prefix.hasPrefix("TAG") || prefix.hasPrefix("ID3") || prefix == "APET" || prefix == "LYRI"
    }
}
