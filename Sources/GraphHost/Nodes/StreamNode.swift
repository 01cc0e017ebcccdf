import Foundation

/// `stream`: the compressed-stream converter. Decodes MP3 bytes on its own thread into a ring the
/// render world copies from, resampled to the graph rate and mapped to the graph's channels.
public struct StreamNode: NodeDefinition {
    public static let typeName = "stream"
    public static let settingKeys = ["url", "loop", "bufferSeconds"]

    public var url: String
    /// The resolved local path.
    public var path: String
    public var loop: Bool
    /// Decoded audio buffered before playback starts.
    public var bufferSeconds: Double
    /// The media's own rate and channel count, as probed.
    public var mediaRate: Int
    public var mediaChannels: Int

    public var inputBuses: Int { 0 }
    public var outputBuses: Int { 1 }
    public var summary: [(String, String)] {
        [("url", url), ("loop", "\(loop)"), ("bufferSeconds", Format.number(bufferSeconds)),
         ("media", "\(mediaRate) Hz, \(mediaChannels) ch")]
    }

    /// Resolves a path or file: URL against `base`.
    public static func resolve(_ url: String, base: URL) throws -> String {
        if let scheme = url.range(of: "://").map({ String(url[..<$0.lowerBound]) }) ?? (url.hasPrefix("file:") ? "file" : nil) {
            guard scheme.lowercased() == "file", let u = URL(string: url), u.isFileURL else { throw StreamError.unsupportedURL(url) }
            return u.path
        }
        return url.hasPrefix("/") ? url : base.appendingPathComponent(url).standardizedFileURL.path
    }

    public static func parse(_ settings: NodeSettings, context: NodeContext, issues: inout GraphIssues) -> StreamNode? {
        guard let url = settings.string("url", issues: &issues) else {
            if settings.object["url"] == nil { issues.report(settings.path, "missing \"url\" (an MP3 file path)", at: settings.object) }
            return nil
        }
        let loop = settings.bool("loop", issues: &issues) ?? false
        let bufferSeconds = settings.number("bufferSeconds", in: 0...60, issues: &issues) ?? 0.5
        do {
            let path = try resolve(url, base: context.baseDirectory)
            let media = try MP3Decoder.probe(FileByteSource(path: path))
            return StreamNode(url: url, path: path, loop: loop, bufferSeconds: bufferSeconds,
                              mediaRate: media.rate, mediaChannels: media.channels)
        } catch {
            issues.report(settings.path("url"), "\(error)", at: settings.object["url"])
            return nil
        }
    }

    public func instantiate(id: String, format: GraphFormat) throws -> NodeInstance {
        StreamInstance(id: id, node: self, format: format)
    }

    /// A stream is kept (playing on from where it is) when it reads the same media the same way.
    public func liveChanges(from old: any NodeDefinition) -> [NodeCommand]? {
        guard let old = old as? StreamNode, old.path == path, old.loop == loop, old.bufferSeconds == bufferSeconds else { return nil }
        return []
    }
}

/// A running stream node: its kernel, its ring and its decoder thread.
public final class StreamInstance: NodeInstance {
    public let id: String
    public let node: StreamNode
    let kernelPointer: UnsafeMutablePointer<StreamKernel>
    public let ring: PCMRing
    public let counters: StreamCounters
    public let wakeup = RingWakeup()
    let decoder: StreamDecoder
    let startThreshold: Int

    init(id: String, node: StreamNode, format: GraphFormat) {
        self.id = id
        self.node = node
        startThreshold = Int(node.bufferSeconds * Double(format.sampleRate))
        ring = .allocate(minimumFrames: max(2 * startThreshold, format.sampleRate, 4 * format.maxFrames), channels: format.channels)
        counters = .create()
        kernelPointer = .allocate(capacity: 1)
        kernelPointer.initialize(to: StreamKernel(ring: ring, counters: counters, startThreshold: startThreshold))
        let path = node.path
        decoder = StreamDecoder(source: { try FileByteSource(path: path) }, format: format, ring: ring,
                                counters: counters, loop: node.loop, wakeup: wakeup)
    }

    public var kernel: RenderStep.Kernel { .stream(kernelPointer) }

    public func check(_ command: NodeCommand) throws {
        throw CommandError("stream nodes have no presets or parameters yet")
    }

    public func messages(for command: NodeCommand) throws -> [ControlMessage] {
        try check(command)
        return []
    }

    public func start() { decoder.start() }

    /// The decoder's error, if it stopped on one.
    public var failure: Error? { decoder.failure }

    /// True when the next `frames` frames can be rendered without an underrun (control side, offline rendering).
    public func canRender(frames: Int) -> Bool {
        if counters.decoderFinished.load(ordering: .acquiring) { return true }
        let needed = kernelPointer.pointee.playing ? frames : max(frames, startThreshold)
        return ring.index.readable() >= min(needed, ring.capacityFrames)
    }

    public var finished: Bool { counters.finished.load(ordering: .acquiring) }

    public func close() {
        decoder.stop()
        kernelPointer.deinitialize(count: 1).deallocate()
        ring.deallocate()
        counters.destroy()
    }
}
