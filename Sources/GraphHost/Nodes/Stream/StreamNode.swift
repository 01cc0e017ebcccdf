import FoundationEssentials
import Glibc
import Synchronization

/// `stream`: the compressed-stream converter. Decodes MP3, AAC, Ogg Vorbis, Opus, FLAC, WAV and HLS (a file, or an
/// http/https URL downloaded while it plays) on its own thread into a ring the render world copies from, resampled to
/// the graph rate and mapped to the graph's channels by layout (or by `channelMatrix`). `seek NODE SECONDS` moves a
/// file or finite download.
public struct StreamNode: Sendable, NodeDefinition {
    public static let typeName = "stream"

    static let urlSetting = SettingDescriptor(
        "url", .string, required: true, pattern: "^.+$",
        doc:
            "A media file path (relative to the graph file's folder), a `file:` URL, or an "
            + "`http://` / `https://` URL (a file, Icecast radio or an HLS playlist), or "
            + "`rtp://ADDRESS:PORT?format=L16&rate=48000&channels=2` (an RTP session, L16 or L24, as PipeWire's "
            + "RTP sink sends; `bufferSeconds` is then its jitter buffer; `clock=shared` for a sender on the graph's "
            + "own clock, else its clock is followed by resampling), or `sap://[ADDRESS][:PORT][?session=NAME]` "
            + "(the RTP session announced by SAP under that name, or the first announced; its format from the "
            + "announcement; `clock` as for rtp)."
    )
    static let loopSetting = SettingDescriptor(
        "loop", .boolean, default: .bool(false), doc: "Plays a file again from the start when it ends.")
    static let bufferSetting = SettingDescriptor(
        "bufferSeconds", .number, range: 0...60, default: .number(0.5),
        doc: "Seconds of decoded audio buffered before playback starts, and again after an underrun.")
    static let cacheSetting = SettingDescriptor(
        "cache", .string, pattern: "^.+$",
        doc:
            "Network streams: a file that keeps the complete download, "
            + "played from instead of the network once it exists."
    )
    static let retrySetting = SettingDescriptor(
        "retrySeconds", .number, range: 0...3600, default: .number(HTTPByteSource.defaultRetrySeconds),
        doc:
            "Network streams: how long a stream that has played is retried, with backoff, after its connection "
            + "ended, broke or was refused; then it fails (fades out, is reported, counts as finished)."
    )
    static let matrixSetting = SettingDescriptor(
        "channelMatrix", .numberRows, range: -ChannelMixing.matrixGainLimit...ChannelMixing.matrixGainLimit,
        itemCount: 1...8,
        doc:
            "Explicit channel mapping: one row per graph channel of one linear "
            + "gain per media channel (in the media's layout order)."
    )
    static let lfeSetting = SettingDescriptor(
        "lfeMix", .number, range: -60...10,
        doc: "dB: mix the LFE into a downmix that has no LFE channel (left out by default).")

    public static let descriptor = NodeDescriptor(
        typeName: typeName,
        summary: "Decodes a media file or a network stream on its own thread, resampled to the graph.",
        ports: [PortDescriptor(.audio, .output, name: "out")], traits: [.isSource, .takesFiles, .canSeek],
        settings: [urlSetting, loopSetting, bufferSetting, cacheSetting, retrySetting, matrixSetting, lfeSetting])

    public var url: String
    /// The resolved local path, or the URL of a network stream.
    public var path: String
    public var isRemote: Bool
    /// Where a network stream's complete download is kept (and played from, once there).
    public var cachePath: String?
    public var loop: Bool
    /// Decoded audio buffered before playback starts.
    public var bufferSeconds: Double
    /// How long a network stream that has played is retried, with backoff, after its connection failed.
    public var retrySeconds: Double
    /// The RTP session an `rtp://` URL names (nil for a file or an HTTP stream).
    public var rtp: RTPSession? { isRemote ? try? RTPSession(url: path) : nil }
    /// The announcements a `sap://` URL listens for (nil for other URLs).
    public var sap: SAPQuery? { isRemote ? try? SAPQuery(url: path) : nil }
    /// The media's codec, rate and channel count, as probed (nil for a network stream: learnt when it plays).
    public var media: MediaInfo?
    /// How the media's channels map to the graph's.
    public var mixing = ChannelMixing()

    public var inputBuses: Int { 0 }
    public var outputBuses: Int { 1 }
    public var summary: [(String, String)] {
        var lines = [("url", url), ("loop", "\(loop)"), ("bufferSeconds", Format.number(bufferSeconds))]
        if let cachePath { lines.append(("cache", cachePath)) }
        if isRemote { lines.append(("retrySeconds", Format.number(retrySeconds))) }
        if let matrix = mixing.matrix {
            let rows = matrix.map { row in "[" + row.map { Format.number($0) }.joined(separator: ", ") + "]" }
            lines.append(("channelMatrix", rows.joined(separator: " ")))
        }
        if let lfe = mixing.lfeGainDB { lines.append(("lfeMix", "\(Format.number(lfe)) dB")) }
        lines.append(("media", media?.description ?? "probed while playing"))
        return lines
    }

    /// Resolves a path or file: URL against `base`; an http or https URL stays as it is (remote: true).
    public static func resolve(_ url: String, base: URL) throws -> (path: String, remote: Bool) {
        if let scheme = url.firstRange(of: "://").map({ String(url[..<$0.lowerBound]) })
            ?? (url.hasPrefix("file:") ? "file" : nil)
        {
            switch scheme.lowercased() {
            case "rtp":
                if try RTPSession(url: url).name != nil {
                    throw StreamError.unreadable(
                        url, "session names a session sent; receive one by its name with sap://?session=NAME")
                }
                return (url, true)
            case "sap":
                _ = try SAPQuery(url: url)
                return (url, true)
            case "http", "https":
                guard let u = URL(string: url), u.host != nil else { throw StreamError.unsupportedURL(url) }
                return (url, true)
            case "file":
                guard let u = URL(string: url), u.isFileURL else { throw StreamError.unsupportedURL(url) }
                return (u.path, false)
            default:
                throw StreamError.unsupportedURL(url)
            }
        }
        return (url.hasPrefix("/") ? url : base.appendingPathComponent(url).standardizedFileURL.path, false)
    }

    public static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> StreamNode? {
        guard let url = settings.string(urlSetting, issues: &issues) else {
            if settings.object["url"] == nil {
                issues.report(
                    settings.path, "missing \"url\" (a media file path or an http:// or https:// URL)",
                    at: settings.object)
            }
            return nil
        }
        let loop = settings.bool(loopSetting, issues: &issues) ?? false
        let bufferSeconds = settings.number(bufferSetting, issues: &issues) ?? 0.5
        let retrySeconds = settings.number(retrySetting, issues: &issues) ?? HTTPByteSource.defaultRetrySeconds
        let cache = settings.string(cacheSetting, issues: &issues).map {
            $0.hasPrefix("/") ? $0 : context.baseDirectory.appendingPathComponent($0).standardizedFileURL.path
        }
        do {
            var (path, remote) = try resolve(url, base: context.baseDirectory)
            if !remote { path = try context.files.confine(path, given: url) }
            if let cache, context.files.roots != nil {
                _ = try context.files.confine(
                    URL(fileURLWithPath: cache).deletingLastPathComponent().path, given: cache, folder: true)
            }
            if cache != nil && (url.lowercased().hasPrefix("rtp:") || url.lowercased().hasPrefix("sap:")) {
                issues.report(
                    settings.path("cache"), "a cache is for downloads; an RTP session is live",
                    at: settings.object["cache"])
                return nil
            }
            if cache != nil && !remote {
                issues.report(
                    settings.path("cache"), "a cache is for network streams; '\(url)' is a local file",
                    at: settings.object["cache"])
                return nil
            }
            // A network stream's format is learnt when it plays (probing would download it now).
            let media = remote ? nil : try MediaProbe.probe(path: path)
            let lfeMix = settings.number(lfeSetting, issues: &issues)
            let matrix: [[Double]]?
            switch channelMatrix(
                settings, graphChannels: context.format.channels, media: media, url: url, issues: &issues)
            {
            case .invalid: return nil
            case .absent: matrix = nil
            case .given(let given): matrix = given
            }
            var node = StreamNode(
                url: url, path: path, isRemote: remote, cachePath: cache, loop: loop, bufferSeconds: bufferSeconds,
                retrySeconds: retrySeconds, media: media)
            node.mixing = ChannelMixing(matrix: matrix, lfeGainDB: lfeMix)
            return node
        } catch {
            issues.report(settings.path("url"), "\(error)", at: settings.object["url"])
            return nil
        }
    }

    /// `channelMatrix`: one row per graph channel, one column per media channel (checked against a file's channels),
    /// linear gains within ±`ChannelMixing.matrixGainLimit`: `.some(nil)` when the setting is absent, nil (reported)
    /// when it is malformed.
    /// A stream node's `channelMatrix` setting: not there, reported as invalid, or the gains.
    private enum MatrixSetting {
        case absent, invalid
        case given([[Double]])
    }

    private static func channelMatrix(
        _ settings: NodeSettings, graphChannels: Int, media: MediaInfo?, url: String,
        issues: inout GraphIssues
    ) -> MatrixSetting {
        guard let given = settings.object["channelMatrix"] else { return .absent }
        let path = settings.path("channelMatrix")
        let shape =
            "\(graphChannels) row\(graphChannels == 1 ? "" : "s") (one per graph channel) of one gain per media channel"
        guard let rows = given.arrayValue else {
            issues.report(path, "expected an array of \(shape), found \(given.typeName)", at: given)
            return .invalid
        }
        guard rows.count == graphChannels else {
            issues.report(
                path,
                "has \(rows.count) row\(rows.count == 1 ? "" : "s"); the graph has \(graphChannels) "
                    + "channel\(graphChannels == 1 ? "" : "s"), so it needs \(shape)",
                at: given)
            return .invalid
        }
        let limit = ChannelMixing.matrixGainLimit
        var matrix: [[Double]] = []
        for (r, row) in rows.enumerated() {
            let rowPath = "\(path)[\(r)]"
            guard let items = row.arrayValue, !items.isEmpty else {
                issues.report(
                    rowPath,
                    "expected an array of gains, one per media channel, found "
                        + "\(row.arrayValue == nil ? row.typeName : "an empty array")",
                    at: row)
                return .invalid
            }
            var columns = items.count
            if let media { columns = media.channels } else if let first = matrix.first { columns = first.count }
            guard items.count == columns else {
                let why =
                    media != nil ? "'\(url)' has \(columns) channel\(columns == 1 ? "" : "s")" : "row 0 has \(columns)"
                issues.report(
                    rowPath,
                    "has \(items.count) gain\(items.count == 1 ? "" : "s"), but \(why): one column per media channel",
                    at: row)
                return .invalid
            }
            let gains = items.map { $0.numberValue ?? .nan }
            if let c = gains.firstIndex(where: { !(-limit...limit).contains($0) }) {
                var found = items[c].typeName
                if let number = items[c].numberValue { found = Format.number(number) }
                issues.report(
                    "\(rowPath)[\(c)]",
                    "expected a gain within \(Format.number(-limit))…\(Format.number(limit)), found \(found)",
                    at: items[c])
                return .invalid
            }
            matrix.append(gains)
        }
        return .given(matrix)
    }

    public func instantiate(id: String, format: GraphFormat) throws -> NodeInstance {
        StreamInstance(id: id, node: self, format: format)
    }

    /// A stream is kept (playing on from where it is) when it reads the same media the same way.
    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? {
        guard let old = old as? StreamNode, old.path == path, old.loop == loop, old.bufferSeconds == bufferSeconds,
            old.cachePath == cachePath, old.retrySeconds == retrySeconds, old.mixing == mixing
        else { return nil }
        return []
    }
}

/// A running stream node: its kernel, its ring and its decoder thread. What the control world reads of it is
/// atomic or locked, so any thread may watch it.
public final class StreamInstance: NodeInstance, Sendable {
    public let id: String
    public let node: StreamNode
    /// The kernel the render plan runs; the control world allocates and frees it and never reads it meanwhile.
    nonisolated(unsafe) let kernelPointer: UnsafeMutablePointer<StreamKernel>
    public let ring: PCMRing
    public let counters: StreamCounters
    public let wakeup: RingWakeup
    let decoder: StreamDecoder
    let startThreshold: Int
    /// The seek crossfade's gains and the kernel's buffer for the new audio.
    nonisolated(unsafe) let seekFadeGains: UnsafeMutablePointer<Float>
    nonisolated(unsafe) let seekScratch: UnsafeMutablePointer<Float>
    /// Seeks sent so far (the kernel and the decoder know them by number).
    private let seeks = Mutex(0)
    /// Download state and stream titles of a network stream (nil for a file).
    public let network: NetworkStreamStatus?
    /// An RTP stream's packet counts (nil for other streams).
    let packetCounts: RTPReceiveCounters?
    public var rtpCounters: RTPReceiveCounters.Snapshot? { packetCounts?.snapshot }

    init(id: String, node: StreamNode, format: GraphFormat) {
        self.id = id
        self.node = node
        startThreshold = Int(node.bufferSeconds * Double(format.sampleRate))
        let fadeFrames = max(1, Int(GraphDocument.defaultCrossfadeSeconds * Double(format.sampleRate)))
        // Room for the new audio of a seek beside the old: the crossfade and two slices.
        let reserve = fadeFrames + 2 * format.maxFrames
        ring = .allocate(
            minimumFrames: max(2 * startThreshold, format.sampleRate, 4 * format.maxFrames) + reserve,
            channels: format.channels)
        counters = .create()
        wakeup = RingWakeup(room: counters.room)
        seekFadeGains = .allocateRender(capacity: fadeFrames)
        for f in 0..<fadeFrames { seekFadeGains[f] = Float(sin(Double(f + 1) / Double(fadeFrames + 1) * .pi / 2)) }
        seekScratch = .allocateRender(capacity: format.maxFrames * format.channels)
        seekScratch.initialize(repeating: 0, count: format.maxFrames * format.channels)
        var kernel = StreamKernel(ring: ring, counters: counters, startThreshold: startThreshold)
        kernel.seekFadeFrames = fadeFrames
        kernel.dryFadeFrames = min(fadeFrames, max(64, startThreshold / 4))
        kernel.seekFadeGains = seekFadeGains
        kernel.seekScratch = seekScratch
        kernel.scratchFrames = format.maxFrames
        kernelPointer = .allocateRender(capacity: 1)
        kernelPointer.initialize(to: kernel)
        let rtp = node.rtp
        let sap = node.sap
        let network = node.isRemote && rtp == nil && sap == nil ? NetworkStreamStatus() : nil
        self.network = network
        let packetCounts = rtp != nil || sap != nil ? RTPReceiveCounters() : nil
        self.packetCounts = packetCounts
        decoder = StreamDecoder(
            source: { () throws -> ByteSource in
                if let rtp, let packetCounts {
                    return try RTPPacketSource(session: rtp, url: node.path, counters: packetCounts)
                }
                if let sap, let packetCounts {
                    return try RTPPacketSource(discovering: sap, url: node.path, counters: packetCounts)
                }
                if let cache = node.cachePath, FileManager.default.fileExists(atPath: cache) {
                    return try FileByteSource(path: cache)
                }
                if let network {
                    return HTTPByteSource(
                        url: node.path, status: network, cachePath: node.cachePath, retrySeconds: node.retrySeconds)
                }
                return try FileByteSource(path: node.path)
            }, format: format, mixing: node.mixing, ring: ring, counters: counters, loop: node.loop, wakeup: wakeup,
            reserveFrames: reserve, bufferFrames: startThreshold)
    }

    public var kernel: RenderStep.Kernel { .stream(kernelPointer) }

    public func check(_ command: NodeCommand) throws {
        guard case .seek(let seconds) = command else {
            throw NodeCommandError.notSupported(
                "stream nodes have no presets or parameters; they take `seek \(id) SECONDS`")
        }
        guard seconds >= 0 else {
            throw NodeCommandError.cannotSeek(node: id, reason: "\(Format.number(seconds)) s is before the start")
        }
        if let duration = tags?.durationSeconds ?? node.media?.durationSeconds, seconds > duration {
            throw NodeCommandError.cannotSeek(
                node: id,
                reason: "\(Format.number(seconds)) s is past the end of '\(node.url)' (\(Format.number(duration)) s)")
        }
        if let network, network.connected, network.totalBytes == nil {
            throw NodeCommandError.cannotSeek(
                node: id,
                reason:
                    "'\(node.url)' is a live stream or a download of unknown length "
                    + "(only files and downloads with a Content-Length can seek)"
            )
        }
        if counters.decoderFinished.load(ordering: .acquiring) {
            throw NodeCommandError.cannotSeek(node: id, reason: "'\(node.url)' has been decoded to its end")
        }
    }

    public func messages(for command: NodeCommand) throws -> [ControlMessage] {
        try check(command)
        guard case .seek(let seconds) = command else { return [] }
        let number = seeks.withLock { count in
            count += 1
            return count
        }
        decoder.seek(to: seconds, number: number)
        return [.kernel(.stream(kernelPointer, .seek(number)))]
    }

    public func start() { decoder.start() }

    /// Live, an RTP session's receive thread runs at real-time priority (`StreamDecoder.setRealTime`).
    public func setRealTime(_ live: Bool) { decoder.setRealTime(live) }

    public var mediaStream: StreamInstance? { self }

    /// The decoder's error, if it stopped on one.
    public var failure: Error? { decoder.failure }

    /// The media's tags and duration, once read.
    public var tags: MediaTags? { decoder.tags }

    /// Codec, rate, channels and bit rate of what plays, once known.
    public var media: MediaInfo? { decoder.info ?? node.media }

    /// The title shown for the stream: the network stream's latest ICY title, else the file's ID3 title.
    public var title: String? {
        if let title = network?.title, !title.isEmpty { return title }
        return tags?.title
    }

    /// The media's URL: a network stream's URL, or a file: URL.
    public var mediaURL: String { node.isRemote ? node.path : URL(fileURLWithPath: node.path).absoluteString }

    /// Seconds into the media: audio frames played at the graph rate (`rate`), within the file when it loops.
    public func position(rate: Double) -> Double {
        let seconds = Double(counters.framesPlayed.load(ordering: .relaxed)) / rate
        if node.loop, let duration = tags?.durationSeconds, duration > 0 {
            return seconds.truncatingRemainder(dividingBy: duration)
        }
        return seconds
    }

    /// Damage the frame guard found in the stream's bytes so far.
    public var damage: StreamDamage { decoder.damage }

    /// True when the next `frames` frames can be rendered without an underrun (control side, offline rendering).
    public func canRender(frames: Int) -> Bool {
        if counters.decoderFinished.load(ordering: .acquiring) { return true }
        let seek = seeks.withLock { $0 }
        if seek > counters.seekHandled.load(ordering: .acquiring) {
            // The kernel crossfades into the seek's new audio as soon as the decoder has put enough of it in the ring.
            guard counters.seekDone.load(ordering: .acquiring) == seek else { return false }
            let fresh = ring.index.written.load(ordering: .acquiring) - counters.seekBoundary.load(ordering: .relaxed)
            return fresh >= kernelPointer.pointee.seekFadeFrames + frames
        }
        return ring.index.readable() >= readableNeeded(frames: frames)
    }

    /// The frames the ring must hold to render `frames` outside a seek. A crossfade's worth stays buffered beyond the
    /// slice, so a seek applied after it has the old audio to fade out from, and the kernel never takes the ring for
    /// running dry (offline renders run ahead of the decoder).
    func readableNeeded(frames: Int) -> Int {
        let fade = kernelPointer.pointee.seekFadeFrames
        let needed = counters.playing.load(ordering: .acquiring) ? frames + fade : max(frames + fade, startThreshold)
        return min(needed, ring.capacityFrames - decoder.reserveFrames)
    }

    /// Sleeps until `canRender(frames:)` may have changed (control side, offline rendering). Outside a seek it waits
    /// for the decoder to fill half the ring, so the renderer, faster than any decoder, wakes once per half ring of
    /// audio rather than once per decoded block.
    public func waitToRender(frames: Int) {
        guard seeks.withLock({ $0 }) <= counters.seekHandled.load(ordering: .acquiring) else {
            return wakeup.waitForData()
        }
        let usable = ring.capacityFrames - decoder.reserveFrames
        wakeup.waitForData(readable: max(readableNeeded(frames: frames), usable / 2), in: ring.index)
    }

    public var finished: Bool { counters.finished.load(ordering: .acquiring) }

    /// connecting, buffering, playing, rebuffering, retrying (a network stream's connection failed), ended or failed.
    public var state: NetworkStreamStatus.State {
        if failure != nil { return .failed }
        if finished { return .ended }
        if network?.problem != nil { return .retrying }
        if counters.decoderFinished.load(ordering: .acquiring) { return .playing }  // draining the last of the ring
        if counters.playing.load(ordering: .relaxed) { return .playing }
        if counters.framesPlayed.load(ordering: .relaxed) > 0 { return .rebuffering }
        return network.map { $0.connected ? .buffering : .connecting } ?? .buffering
    }

    public func close() {
        decoder.stop()
        kernelPointer.deinitialize(count: 1).deallocateRender()
        seekFadeGains.deallocateRender()
        seekScratch.deallocateRender()
        ring.deallocate()
        counters.destroy()
    }
}
