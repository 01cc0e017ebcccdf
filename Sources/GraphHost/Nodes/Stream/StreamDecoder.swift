import Dispatch
import FoundationEssentials
import Glibc
import Logging
import Synchronization

/// Runs ahead of the render world: reads a byte source on its own thread, tells its format from its first bytes,
/// decodes it (libmpg123 for MP3, FFmpeg for the rest), maps its channels to the graph's by layout, converts it to the
/// graph's rate, and writes it into the stream kernel's PCM ring. A stream may change format, rate or channels between
/// links (chained Ogg, a reconnect of an endless stream); each link gets a decoder of its own. Seeks are carried out
/// here.
public final class StreamDecoder: Sendable {
    private let makeSource: @Sendable () throws -> ByteSource
    private let format: GraphFormat
    private let mixing: ChannelMixing
    private let ring: PCMRing
    private let counters: StreamCounters
    private let loop: Bool
    private let wakeup: RingWakeup
    /// Ring frames kept free for a seek's new audio.
    let reserveFrames: Int
    /// The frames buffered before playback starts (an RTP session's jitter buffer holds this level).
    let bufferFrames: Int
    private let logger = Logger(label: "graphhost.stream")
    /// What the decoder thread and the threads that watch or stop it share.
    private struct Shared {
        var thread: JoinableThread?
        var stopping = false
        var damage = StreamDamage()
        /// The damage of the links and loops before the current decoder's.
        var earlierDamage = StreamDamage()
        var failure: Error?
        var source: ByteSource?
        var tags: MediaTags?
        var info: MediaInfo?
        /// The latest seek asked for and not yet carried out: seconds and its number.
        var seek: (seconds: Double, number: Int)?
    }
    private let shared = Mutex(Shared())
    /// Whether a real-time thread renders the graph (`setRealTime`).
    private let live = Atomic<Bool>(false)
    /// The first error the decoder thread met, if any.
    public var failure: Error? { shared.withLock { $0.failure } }
    /// What the decoders dropped or silenced so far, over every link and loop.
    public var damage: StreamDamage { shared.withLock { $0.damage } }
    /// The tags and duration of the media (ID3 of an MP3 file; Vorbis comments, ID3 or MP4 tags of the other formats,
    /// updated at each link of a chained stream); nil when it has none.
    public var tags: MediaTags? { shared.withLock { $0.tags } }
    /// Codec, rate, channels and bit rate of what is playing, once known.
    public var info: MediaInfo? { shared.withLock { $0.info } }

    public init(
        source: @escaping @Sendable () throws -> ByteSource, format: GraphFormat,
        mixing: ChannelMixing = ChannelMixing(), ring: PCMRing,
        counters: StreamCounters, loop: Bool, wakeup: RingWakeup, reserveFrames: Int, bufferFrames: Int
    ) {
        makeSource = source
        self.format = format
        self.mixing = mixing
        self.ring = ring
        self.counters = counters
        self.loop = loop
        self.wakeup = wakeup
        self.reserveFrames = reserveFrames
        self.bufferFrames = bufferFrames
    }

    public func start() {
        let thread = JoinableThread(name: "graphhost-decoder") { [self] in run() }
        shared.withLock { $0.thread = thread }
    }

    /// Live (a real-time thread renders) or offline. Live, an RTP session's receive thread, which must keep pace with
    /// the render cycle (a packet late is a buffer run dry), runs at real-time priority (`RealTimeScheduling`) where
    /// the system allows it; it takes the change as its next packet arrives.
    public func setRealTime(_ live: Bool) { self.live.store(live, ordering: .relaxed) }

    /// Asks the thread to stop and waits for it.
    public func stop() {
        let thread = shared.withLock { shared in
            defer { shared.thread = nil }
            shared.stopping = true
            shared.source?.cancel()
            return shared.thread
        }
        guard let thread else { return }
        wakeup.signalSpace()
        thread.join()
    }

    /// Asks the thread to move to `seconds` into the media; `number` is the seek's number the kernel was sent.
    public func seek(to seconds: Double, number: Int) {
        shared.withLock { $0.seek = (seconds, number) }
        wakeup.signalSpace()
    }

    private var shouldStop: Bool { shared.withLock { $0.stopping } }
    private var shouldAbandon: Bool { shared.withLock { $0.stopping || $0.seek != nil } }

    private func run() {
        // The reserve is for a seek's new audio: while the kernel has not crossed the latest boundary, it may be used.
        let feeder = RingFeeder(
            format: format, mixing: mixing, ring: ring, wakeup: wakeup, abandon: { [self] in shouldAbandon },
            reserve: { [self] in
                counters.seekHandled.load(ordering: .acquiring) < counters.seekDone.load(ordering: .relaxed)
                    ? 0 : reserveFrames
            },
            warn: { [self] message in logger.warning("\(shared.withLock { $0.source?.name } ?? "stream"): \(message)") }
        )
        defer {
            counters.decoderFinished.store(true, ordering: .releasing)
            wakeup.signalData()
        }
        do {
            let source = try makeSource()
            let cancelled = shared.withLock { shared in
                shared.source = source
                return shared.stopping
            }
            if cancelled { source.cancel() }
            defer { shared.withLock { $0.source = nil } }
            if let packets = source as? RTPPacketSource {
                let decoder = RTPDecoder(source: packets)
                publish(decoder, fileTags: nil)
                var follower: ClockFollower?
                var keeper = JitterBufferKeeper(target: bufferFrames, rate: format.sampleRate)
                var underruns = counters.underruns.load(ordering: .relaxed)
                var realTime = false
                /// Live, this thread keeps pace with the render cycle at real-time priority (`setRealTime`).
                func followLive() {
                    guard live.load(ordering: .relaxed) != realTime else { return }
                    realTime.toggle()
                    let result = RealTimeScheduling.setCurrentThread(realTime: realTime)
                    guard result != 0 else { return }
                    logger.notice(
                        """
                        \(packets.name): the RTP receive thread cannot \(realTime ? "take" : "leave") real-time \
                        scheduling (\(String(cString: strerror(result)))); it keeps its own, and a busy machine may \
                        make it late (allow real-time scheduling, e.g. RLIMIT_RTPRIO)
                        """)
                }
                while !shouldStop,
                    try decoder.decodeNext(emit: { samples, frames, layout, rate in
                        followLive()
                        let now = counters.underruns.load(ordering: .relaxed)
                        if now != underruns {
                            underruns = now
                            follower?.restart()
                            keeper.restart()
                        }
                        let level = ring.index.readable()
                        let packetFrames = frames * format.sampleRate / rate
                        var correction = 0
                        let excess =
                            decoder.isResynchronising ? 0 : keeper.excess(level: level, packetFrames: packetFrames)
                        if excess < 0 {
                            // Overfull (a burst, or a long gap filled in): back to the level held now.
                            decoder.resynchronise(by: excess * rate / format.sampleRate)
                            keeper.restart()
                            follower?.restart()
                        } else {
                            let recovering = keeper.isRecovering
                            correction = keeper.note(level: level, packetFrames: packetFrames)
                            if recovering && correction != 0 && packets.followsClock {
                                // What the rest of a burst left: down to the level held, the clock settling afresh.
                                decoder.resynchronise(by: correction * rate / format.sampleRate)
                                follower?.restart()
                            }
                        }
                        packets.counters.update { $0.bufferedFrames = keeper.average }
                        guard packets.followsClock else {
                            if correction != 0 { decoder.resynchronise(by: correction * rate / format.sampleRate) }
                            return try feeder.write(samples, frames: frames, layout: layout, rate: rate)
                        }
                        if follower?.rate != rate || follower?.channels != layout.channels {
                            follower = ClockFollower(channels: layout.channels, rate: rate)
                        }
                        let buffered = Double(level) / Double(format.sampleRate)
                        try follower?.pass(samples, frames: frames, bufferedSeconds: buffered) {
                            try feeder.write($0, frames: $1, layout: layout, rate: rate)
                        }
                    })
                {
                    // An announced session's format and name are known once it is found, and may change.
                    publish(decoder, fileTags: nil)
                }
                return
            }
            let fileTags = (source as? FileByteSource).flatMap { MediaTags.read(path: $0.name) }
            var input = MediaInput(source)
            while !shouldStop {
                var kind = try MediaSniffer.detect(input)
                if kind == .hls {
                    input = MediaInput(try HLSPlaylistReader.source(reading: input))
                    kind = try MediaSniffer.detect(input)
                }
                let decoder = try kind.decoder(reading: input)
                publish(decoder, fileTags: fileTags)
                var more = true
                while more && !shouldStop {
                    if let seek = shared.withLock({ $0.seek }) {
                        try carryOut(seek, decoder: decoder, feeder: feeder)
                        continue
                    }
                    more = try decoder.decodeNext { try feeder.write($0, frames: $1, layout: $2, rate: $3) }
                    publish(decoder, fileTags: fileTags)
                }
                shared.withLock { $0.earlierDamage = $0.damage }
                if input.atLinkEnd {
                    input.nextLink()
                } else if loop && !shouldStop {
                    try input.rewind()
                } else {
                    break
                }
            }
            feeder.flush()
        } catch {
            shared.withLock { $0.failure = error }
            counters.decoderFailed.store(true, ordering: .relaxed)
        }
    }

    /// Moves the decoder, then publishes where the new audio begins in the ring before writing any of it (so the kernel
    /// never takes new audio for old).
    private func carryOut(_ seek: (seconds: Double, number: Int), decoder: MediaDecoder, feeder: RingFeeder) throws {
        shared.withLock { if $0.seek?.number == seek.number { $0.seek = nil } }
        feeder.discardState()
        let reached = try decoder.seek(to: seek.seconds)
        if reached == nil {
            logger.warning("\(shared.withLock { $0.source?.name } ?? "stream"): cannot seek in this media")
        }
        let frame =
            reached.map { Int(($0 * Double(format.sampleRate)).rounded()) }
            ?? counters.framesPlayed.load(ordering: .relaxed)
        counters.seekBoundary.store(ring.index.written.load(ordering: .relaxed), ordering: .relaxed)
        counters.seekFrame.store(frame, ordering: .relaxed)
        counters.seekDone.store(seek.number, ordering: .releasing)
    }

    /// Makes the decoder's damage, tags and format visible, and logs a new title.
    private func publish(_ decoder: MediaDecoder, fileTags: MediaTags?) {
        let tags = decoder.tags ?? fileTags
        let (name, oldTitle) = shared.withLock { shared -> (String?, String?) in
            let old = shared.tags?.title
            shared.damage = shared.earlierDamage + decoder.damage
            shared.tags = tags
            if let info = decoder.info { shared.info = info }
            return (shared.source?.name, old)
        }
        if let title = tags?.title, title != oldTitle, fileTags == nil {
            logger.info("\(name ?? "stream"): now playing '\(title)'")
        }
    }
}

extension MediaKind {
    /// A decoder for one link of `input`; Ogg is read one chained stream at a time, and a reconnect of an endless
    /// stream starts a new link for FFmpeg (the MP3 path's frame guard resynchronises by itself).
    func decoder(reading input: MediaInput) throws -> MediaDecoder {
        switch self {
        case .mp3:
            input.splitsOggLinks = false
            input.splitsAtBreaks = false
            return try MP3MediaDecoder(input: input)
        case .ffmpeg(let format):
            input.splitsOggLinks = isOgg
            input.splitsAtBreaks = true
            return try FFmpegDecoder(input: input, format: format)
        case .hls:
            throw StreamError.unsupportedMedia(input.name, "an HLS playlist inside an HLS stream")
        }
    }
}

/// Wakes the decoder thread when the ring has room (the render world reads room free; the control world seeks, stops,
/// or reads the ring itself), and a waiting offline renderer or warm-up when it has data.
public final class RingWakeup: Sendable {
    public let room: RingSignal
    private let data = DispatchSemaphore(value: 0)
    /// Wakes an offline renderer waiting for the ring to fill to a mark.
    private let filled = RingSignal.create()

    public init(room: RingSignal) { self.room = room }

    deinit { filled.destroy() }

    public func signalSpace() { room.post() }
    /// The decoder wrote into the ring of `index`; nil: it ended, or stopped writing until there is room.
    public func signalData(written index: SPSCIndex? = nil) {
        data.signal()
        if let index { filled.dataWritten(in: index) } else { filled.post() }
    }
    /// Waits for the decoder's next write or end; the timeout only bounds a wait whose condition changed otherwise.
    public func waitForData() { _ = data.wait(timeout: .now() + .milliseconds(5)) }
    /// Waits until the ring of `index` holds `frames` to read, or the decoder ends or waits for room.
    public func waitForData(readable frames: Int, in index: SPSCIndex) {
        filled.wait(untilReadable: frames, in: index)
    }
}
