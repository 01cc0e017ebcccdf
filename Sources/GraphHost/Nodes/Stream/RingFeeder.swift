/// The decoder thread's end of a stream's PCM ring: maps decoded audio to the graph's channels by layout, resamples it
/// to the graph rate (a new resampler whenever the media's rate changes, after the old one's tail), mutes implausible
/// blocks and writes it, waiting for space. `reserve` frames of the ring stay free, so a seek's new audio always fits
/// beside the old audio still playing.
final class RingFeeder {
    private let format: GraphFormat
    private let ring: PCMRing
    private let wakeup: RingWakeup
    private let reserve: () -> Int
    private let mixing: ChannelMixing
    private let target: ChannelLayout
    /// Told why a source's channels are not mapped as asked (once per source layout).
    private let warn: (String) -> Void
    private var matrix: (source: ChannelLayout, matrix: ChannelMatrix)?
    /// True when what is being written should be dropped (the stream stops, or a seek makes it stale).
    private let abandon: () -> Bool
    private var resampler: Resampler?
    /// Set when the ring filled up: it is topped up again only once `refillFrames` are free, so the decoder runs in
    /// a few bursts a second rather than waking for every callback's worth of room.
    private var waitingForRoom = false
    /// The room a full ring must have before it is topped up: a quarter of it, at most a second (a long buffer must
    /// not leave a network source unread for long).
    private var refillFrames: Int { min(ring.capacityFrames / 4, format.sampleRate) }
    private let mappedFrames = 8192
    private let mapped: UnsafeMutableBufferPointer<Float>
    private let resampled: UnsafeMutableBufferPointer<Float>

    init(
        format: GraphFormat, mixing: ChannelMixing, ring: PCMRing, wakeup: RingWakeup, abandon: @escaping () -> Bool,
        reserve: @escaping () -> Int, warn: @escaping (String) -> Void
    ) {
        self.format = format
        self.mixing = mixing
        self.warn = warn
        target = .standard(channels: format.channels)
        self.ring = ring
        self.wakeup = wakeup
        self.reserve = reserve
        self.abandon = abandon
        mapped = .allocate(capacity: mappedFrames * format.channels)
        resampled = .allocate(capacity: 16384 * format.channels)
    }

    deinit {
        mapped.deallocate()
        resampled.deallocate()
    }

    /// Writes `frames` interleaved frames of the `layout`'s channels at `rate`.
    func write(_ samples: UnsafePointer<Float>, frames: Int, layout: ChannelLayout, rate: Int) throws {
        let channels = layout.channels
        let map = matrix(for: layout)
        if resampler.map({ $0.inputRate != rate }) ?? false { flush() }
        if rate != format.sampleRate && resampler == nil {
            resampler = try Resampler(from: rate, to: format.sampleRate, channels: format.channels)
        }
        // Already the graph's channels at its rate, and nothing to mute: written straight from the decoder's buffer.
        if map.gains == nil && resampler == nil
            && CorruptAudioGuard.isPlausible(UnsafeMutablePointer(mutating: samples), count: frames * channels)
        {
            if !abandon() { store(samples, frames: frames) }
            return
        }
        var done = 0
        while done < frames && !abandon() {
            let part = min(frames - done, mappedFrames)
            map.apply(samples + done * channels, frames: part, into: mapped.baseAddress!)
            done += part
            if let resampler {
                resampler.process(mapped.baseAddress!, frames: part, scratch: resampled) { push($0, frames: $1) }
            } else {
                push(mapped.baseAddress!, frames: part)
            }
        }
    }

    /// The matrix for `layout`, built when the source's layout changes.
    private func matrix(for layout: ChannelLayout) -> ChannelMatrix {
        if let matrix, matrix.source == layout { return matrix.matrix }
        let built = ChannelMatrix(from: layout, to: target, mixing: mixing)
        if ChannelMatrix.explicitMatrixIgnored(mixing, source: layout, target: target) {
            warn(
                "channelMatrix has \(mixing.matrix?.first?.count ?? 0) columns but "
                    + "the media now has \(layout.channels) channels; mapped by layout"
            )
        }
        if let reason = built.fallbackReason { warn("\(layout.channels) channels mapped by position: \(reason)") }
        matrix = (layout, built)
        return built
    }

    /// Passes on the resampler's tail (the end of the media, or before a change of rate).
    func flush() {
        resampler?.process(nil, frames: 0, scratch: resampled) { push($0, frames: $1) }
        resampler = nil
    }

    /// Forgets the resampler's state without its tail (after a seek).
    func discardState() {
        resampler = nil
        // The seek's new audio goes into the ring as soon as there is room.
        waitingForRoom = false
    }

    /// Writes all frames into the ring, waiting for space (control world: waiting is allowed here). `frames` points
    /// into this feeder's own buffers; blocks beyond the ceiling are muted again here because resampling can lift a
    /// peak just under it slightly above.
    private func push(_ frames: UnsafePointer<Float>, frames count: Int) {
        CorruptAudioGuard.muteImplausibleBlocks(
            UnsafeMutablePointer(mutating: frames), frames: count, channels: format.channels)
        store(frames, frames: count)
    }

    /// Writes all frames into the ring, waiting for space.
    private func store(_ frames: UnsafePointer<Float>, frames count: Int) {
        var done = 0
        while done < count {
            var room = ring.index.writable() - reserve()
            if waitingForRoom {
                if room >= refillFrames { waitingForRoom = false } else { room = 0 }
            }
            let n = room > 0 ? ring.write(frames + done * format.channels, frames: min(count - done, room)) : 0
            done += n
            if n > 0 { wakeup.signalData(written: ring.index) }
            if done < count {
                if !waitingForRoom { wakeup.signalData() }
                waitingForRoom = true
                if abandon() { return }
                wakeup.room.wait(untilWritable: reserve() + refillFrames, in: ring.index)
            }
        }
    }
}
