/// Stands between a byte source and libmpg123 and passes on only frames that belong to one unbroken stream.
///
/// A frame is passed on when the next frame's header follows exactly at its end (or, right after a frame passed
/// on, a tag or only junk up to the end of the stream); bytes that are not such a frame (junk, a cut frame at a
/// splice or a reconnect) are dropped, and tags (ID3v1, ID3v2, APEv2) are skipped whole. A layer III frame whose side
/// information cannot be right is passed on silenced: its side information is zeroed except main_data_begin, which is
/// set to the reservoir bytes the decoder holds, so the frames after it still find theirs. Silenced are: a CRC that
/// does not match, a forbidden field value, main data that would reach into the next frame's or past its own frame,
/// main data that lies before a break, and the first frame after a break (so two streams never overlap in the decoder's
/// filter bank). A stream of another rate or layer that follows a frame exactly (files joined) starts afresh,
/// unsilenced, and a Xing, Info or VBRI header frame after playback began is dropped. Free-format streams (three
/// headers a constant distance apart) are passed through unchecked. Clean streams pass unchanged.
final class MPEGFrameGuard {
    /// Bytes dropped between frames after playback began (resynchronisations).
    private(set) var skippedBytes = 0
    /// Frames passed on silenced because their side information was damaged or their main data was lost.
    private(set) var silencedFrames = 0

    private var pending: [UInt8] = []
    private var cursor = 0
    /// Bytes `pending` must hold before the scan runs again: what the free-format check at its start waits for to
    /// tell (0: nothing waited for). A stream that comes a few bytes at a time is not searched again per byte.
    private var freeFormatWait = 0
    private var skipRun = 0
    /// Bytes of a tag still to drop.
    private var tagRemaining = 0
    /// Bit-reservoir bytes the decoder holds before the next frame's main data area.
    private var reservoir = 0
    private var emittedAny = false
    /// Frames silenced for the latest break are damage (junk after playback began), not a start in mid-stream
    /// or a reconnect the byte source announced.
    private var breakIsDamage = false
    /// Offsets in `pending` of breaks the byte source announced.
    private var announcedBreaks: [Int] = []
    private var afterBreak = false
    private var silenceNext = false
    private var passThrough = false

    /// The largest ID3v2 tag honoured after playback began; a bigger size is taken for junk.
    private static var largestTagInStream: Int { 1 << 20 }
    /// Bytes looked at in one place: a frame header with CRC and the longest side information (or a tag header).
    private static var lookahead: Int { 38 }
    /// The most junk after the last frame that still lets it count as the last frame.
    private static var trailingJunkLimit: Int { 4096 }

    /// Forgets the stream (a new one starts: looping or restarting).
    func reset() {
        pending.removeAll(keepingCapacity: true)
        cursor = 0
        skipRun = 0
        tagRemaining = 0
        reservoir = 0
        emittedAny = false
        breakIsDamage = false
        announcedBreaks.removeAll()
        afterBreak = false
        silenceNext = false
        passThrough = false
    }

    /// What to do with each frame passed on: feed its bytes to the decoder; when `concealFrames` is above 0 the
    /// frame was silenced and its decoded audio and the next samples up to `concealFrames` in all are damaged
    /// (the decoder's filter bank carries a frame's error one granule and a synthesis window further).
    typealias Emit = (_ frame: UnsafeRawBufferPointer, _ concealFrames: Int) throws -> Void

    /// The bytes given next do not continue the ones before (the byte source reconnected).
    func markBreak() {
        announcedBreaks.append(pending.count)
    }

    /// Passes on the frames complete in `input` (plus what was held back before); `final` says the stream ends
    /// after `input`, so the last frame needs no successor.
    func filter(_ input: UnsafeRawBufferPointer, final: Bool, emit: Emit) rethrows {
        if passThrough {
            try emit(input, 0)
            return
        }
        pending.append(contentsOf: input)
        if !final && pending.count < freeFormatWait { return }
        freeFormatWait = 0
        try pending.withUnsafeMutableBufferPointer { try scan($0, final: final, emit: emit) }
        if passThrough {
            try pending[cursor...].withUnsafeBytes { try emit($0, 0) }
            cursor = pending.count
        }
        pending.removeSubrange(0..<cursor)
        announcedBreaks = announcedBreaks.map { $0 - cursor }
        cursor = 0
    }

    private func scan(_ bytes: UnsafeMutableBufferPointer<UInt8>, final: Bool, emit: Emit) rethrows {
        let base = bytes.baseAddress!
        let count = bytes.count
        while cursor < count {
            if let at = announcedBreaks.first, cursor >= at {
                announcedBreaks.removeFirst()
                startAfterBreak(isDamage: false)
                continue
            }
            if tagRemaining > 0 {
                let n = min(tagRemaining, count - cursor)
                cursor += n
                tagRemaining -= n
                continue
            }
            guard count - cursor >= Self.lookahead || final && count - cursor >= 4 else {
                if final { cursor = count }
                return
            }
            let here = base + cursor
            if let tag = Self.tagLength(here, available: count - cursor),
                !emittedAny || tag <= Self.largestTagInStream
            {
                tagRemaining = tag
                continue
            }
            let header: MPEGFrameHeader
            switch MPEGFrameHeader.read(here) {
            case .header(let h):
                header = h
            case .freeFormat where !emittedAny:
                let (isStream, needs) = Self.isFreeFormatStream(here, available: count - cursor)
                switch isStream {
                case true?:
                    passThrough = true
                    return
                case nil where !final:
                    freeFormatWait = needs
                    return
                default:
                    skip()
                    continue
                }
            default:
                skip()
                continue
            }
            let end = cursor + header.length
            guard end + Self.lookahead <= count || final else { return }
            let cutByBreak = announcedBreaks.first.map { $0 < end } ?? false  // breaks before `cursor` are gone
            guard end <= count, !cutByBreak else {
                skip()  // incomplete, or cut by a reconnect
                continue
            }
            let endsAtBreak = announcedBreaks.first == end
            let next = end + 4 <= count && !endsAtBreak ? MPEGFrameHeader(base + end) : nil
            let followed = next?.streamKey == header.streamKey
            var joined = false
            if !followed && emittedAny && skipRun == 0, let next {
                let after = end + next.length
                guard after + 4 <= count || final else { return }  // two frames of another stream: a file joined on
                joined = after + 4 <= count && MPEGFrameHeader(base + after)?.streamKey == next.streamKey
            }
            var last = endsAtBreak || joined
            if !followed && !last && emittedAny && skipRun == 0 {  // a last frame is one its predecessor led to
                let trailing = count - end
                if end + 4 <= count && Self.tagLength(base + end, available: trailing) != nil {
                    last = true
                } else if trailing <= Self.trailingJunkLimit && !Self.containsSync(base + end, count: trailing) {
                    guard final else { return }  // only junk may follow up to the end
                    last = true
                }
            }
            guard followed || last else {
                skip()
                continue
            }
            if emittedAny && Self.isInfoFrame(here, header: header) {
                cursor = end  // a joined file's or a segment's header frame: no audio, not part of the reservoir
                continue
            }
            var silenced = false
            if header.layer == 3 {
                var nextSideInfo: LayerIIISideInfo?
                if followed, let next, end + next.prefixLength <= count, Self.crcHolds(base + end, header: next) {
                    nextSideInfo = LayerIIISideInfo(base + end, header: next)
                }
                silenced = checkLayerIII(here, header: header, next: nextSideInfo)
                if joined { reservoir = 0 }  // the next stream starts afresh, with nothing to take from this one
            }
            if skipRun > 0 && emittedAny { skippedBytes += skipRun }
            skipRun = 0
            emittedAny = true
            cursor = end
            try emit(
                UnsafeRawBufferPointer(start: here, count: header.length),
                silenced ? header.samplesPerFrame + 576 + 512 : 0)
        }
    }

    /// Drops one byte that does not start a frame of the stream.
    private func skip() {
        cursor += 1
        skipRun += 1
        startAfterBreak(isDamage: true)
    }

    /// What follows does not continue what came before: the bit reservoir is gone, and the first frame is silenced.
    private func startAfterBreak(isDamage: Bool) {
        reservoir = 0
        afterBreak = emittedAny
        breakIsDamage = isDamage && emittedAny
        silenceNext = false
    }

    /// Silences the layer III frame at `frame` when its side information cannot be right (and says so); `next` is
    /// its successor's side information when one follows and its CRC (if any) holds.
    private func checkLayerIII(_ frame: UnsafeMutablePointer<UInt8>, header: MPEGFrameHeader, next: LayerIIISideInfo?)
        -> Bool
    {
        let side = LayerIIISideInfo(frame, header: header)
        let area = header.length - header.prefixLength
        let end = -side.mainDataBegin * 8 + side.mainDataBits
        var damaged = silenceNext || !side.isPlausible || end > area * 8 || !Self.crcHolds(frame, header: header)
        silenceNext = false
        if let next, end > (area - next.mainDataBegin) * 8 {
            damaged = true
            silenceNext = true  // one of the two frames' fields is wrong: neither is trusted
        }
        let lost = side.mainDataBegin > reservoir && (side.mainDataBits > 0 || afterBreak)
        var mainDataBegin = side.mainDataBegin
        let silenced = damaged || lost || afterBreak
        if silenced {
            mainDataBegin = min(reservoir, header.version == .mpeg1 ? 511 : 255)
            let sideInfo = frame + header.prefixLength - header.sideInfoLength
            sideInfo.update(repeating: 0, count: header.sideInfoLength)
            if header.version == .mpeg1 {
                sideInfo[0] = UInt8(mainDataBegin >> 1)
                sideInfo[1] = UInt8(mainDataBegin & 1) << 7
            } else {
                sideInfo[0] = UInt8(mainDataBegin)
            }
            if header.hasCRC {
                let crc = MPEGFrameHeader.crc(frame, sideInfoLength: header.sideInfoLength)
                frame[4] = UInt8(crc >> 8)
                frame[5] = UInt8(crc & 0xFF)
            }
            if damaged || (afterBreak || lost) && breakIsDamage { silencedFrames += 1 }
        }
        afterBreak = false
        reservoir = area + mainDataBegin
        return silenced
    }

    /// True for a layer III frame that holds a Xing, Info or VBRI header (a file's length and gapless trim) instead of
    /// audio. The first one of a stream goes to the decoder, which reads it; one after playback began comes from a
    /// file joined on or a segment (ffmpeg's segment muxer gives each its own) and would be played as a frame of
    /// silence that breaks the bit reservoir.
    private static func isInfoFrame(_ frame: UnsafePointer<UInt8>, header: MPEGFrameHeader) -> Bool {
        func tag(_ text: String, at offset: Int) -> Bool {
            offset + 4 <= header.length && text.utf8.enumerated().allSatisfy { frame[offset + $0.offset] == $0.element }
        }
        guard header.layer == 3 else { return false }
        return tag("Xing", at: header.prefixLength) || tag("Info", at: header.prefixLength) || tag("VBRI", at: 36)
    }

    /// True unless the layer III frame at `frame` carries a CRC that does not match its side information.
    private static func crcHolds(_ frame: UnsafePointer<UInt8>, header: MPEGFrameHeader) -> Bool {
        !header.hasCRC
            || MPEGFrameHeader.crc(frame, sideInfoLength: header.sideInfoLength) == UInt16(frame[4]) << 8
                | UInt16(frame[5])
    }

    /// The length of a tag starting at `b` (ID3v2 with its footer, ID3v1, APEv2 with its header), or nil.
    private static func tagLength(_ b: UnsafePointer<UInt8>, available: Int) -> Int? {
        func ascii(_ text: String) -> Bool {
            available >= text.utf8.count && text.utf8.enumerated().allSatisfy { b[$0.offset] == $0.element }
        }
        if ascii("ID3"), available >= 10, (2...4).contains(b[3]), b[4] != 0xFF, b[5] & 0x0F == 0,
            b[6] & 0x80 | b[7] & 0x80 | b[8] & 0x80 | b[9] & 0x80 == 0
        {
            let size = Int(b[6]) << 21 | Int(b[7]) << 14 | Int(b[8]) << 7 | Int(b[9])
            return 10 + size + (b[5] & 0x10 != 0 ? 10 : 0)
        }
        if ascii("APETAGEX"), available >= 32 {
            let size = Int(b[12]) | Int(b[13]) << 8 | Int(b[14]) << 16 | Int(b[15]) << 24
            let isHeader = b[23] & 0x20 != 0
            return isHeader ? 32 + size : 32
        }
        if ascii("TAG") { return 128 }
        return nil
    }

    /// True when a byte pair in `b[0..<count]` could start a frame header.
    private static func containsSync(_ b: UnsafePointer<UInt8>, count: Int) -> Bool {
        count > 1 && (0..<(count - 1)).contains { b[$0] == 0xFF && b[$0 + 1] & 0xE0 == 0xE0 }
    }

    /// Whether the free-format header at `b` starts a free-format stream: two more headers like it follow at one
    /// distance (give or take the padding byte). Nil when too few bytes are there to tell, with the bytes that will
    /// tell (`needs`).
    private static func isFreeFormatStream(_ b: UnsafePointer<UInt8>, available: Int) -> (Bool?, needs: Int) {
        func sameHeader(_ i: Int) -> Bool { b[i] == b[0] && b[i + 1] == b[1] && b[i + 2] & 0xFC == b[2] & 0xFC }
        let longest = 2 * 2881 + 8
        guard let distance = (24..<min(2882, max(24, available - 4))).first(where: { sameHeader($0) }) else {
            return (available >= longest ? false : nil, longest)
        }
        for d in [distance - 1, distance, distance + 1] where distance + d + 4 <= available {
            if sameHeader(distance + d) { return (true, 0) }
        }
        return (available >= 2 * distance + 8 ? false : nil, 2 * distance + 8)
    }
}
