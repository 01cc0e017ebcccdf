import CThreadGlue

/// A request scheduled at an exact frame of an offline render: a node command, `chain`, `load`, `pause` or `play`.
public struct TimedCommand: Equatable {
    public var frame: Int
    public var request: Command

    public init(frame: Int, request: Command) {
        self.frame = frame
        self.request = request
    }

    public init(frame: Int, command: NodeRequest) {
        self.init(frame: frame, request: .node(command))
    }

    /// The node command, if this is one.
    public var command: NodeRequest? {
        if case .node(let c) = request { return c }
        return nil
    }
}

/// Drives a graph session as fast as possible: waits (control side) until every stream has the
/// audio the next slice needs, renders it with the same `RenderEngine` the real-time thread uses,
/// and hands the interleaved result to a sink. Timed requests apply at their exact frame.
public struct OfflineRenderer {
    public var session: GraphSession
    /// Frames per render call; may differ from the plan's maxFrames (the plan splits larger calls).
    public var blockFrames: Int
    public var events: [TimedCommand]
    /// Called with the position (frames) each time the render reaches a multiple of `checkpointFrames` (blocks are
    /// cut there), e.g. to read the meters at a fixed interval.
    public var checkpointFrames: Int?
    public var checkpoint: ((Int) throws -> Void)?

    public init(session: GraphSession, blockFrames: Int? = nil, events: [TimedCommand] = []) {
        self.session = session
        self.blockFrames = blockFrames ?? session.format.maxFrames
        self.events = events.sorted { $0.frame < $1.frame }
    }

    /// A renderer with a session of its own for `graph`.
    public init(graph: CompiledGraph, blockFrames: Int? = nil, events: [TimedCommand] = []) {
        self.init(session: GraphSession(graph: graph), blockFrames: blockFrames, events: events)
    }

    /// Checks timed requests before rendering: each against the graph it will meet (requests after a `chain` or
    /// `load` are checked when they apply, against the graph the swap built).
    public static func check(_ events: [TimedCommand], session: GraphSession) throws(RenderError) {
        var swapped = false
        for event in events.sorted(by: { $0.frame < $1.frame }) {
            do throws(ControlError) {
                guard event.request.appliesOffline else { throw .notOffline(event.request) }
                switch event.request {
                case .chain, .load:
                    try session.check(event.request)
                    swapped = true
                default:
                    if !swapped { try session.check(event.request) }
                }
            } catch {
                throw .command(
                    seconds: Double(event.frame) / Double(session.format.sampleRate), request: event.request, error)
            }
        }
    }

    /// What a render produced.
    public struct Summary {
        public var frames: Int
        public var peak: Float
        public var underruns: Int
        /// Frames silenced and bytes skipped by the streams' frame guards.
        public var damage: StreamDamage
    }

    /// Renders until every stream finished (or `durationFrames`); `sink` receives each block of the first output.
    /// `frameSizes`, when given, overrides the slice sizes cyclically (for tests of variable slicing).
    public func render(
        durationFrames: Int?, frameSizes: [Int]? = nil,
        sink: (UnsafePointer<Float>, Int) throws -> Void
    ) throws -> Summary {
        try render(durationFrames: durationFrames, frameSizes: frameSizes, outputs: 1) { _, block, frames in
            try sink(block, frames)
        }
    }

    /// Renders the first `outputs` outputs; `sink` receives each output's interleaved block with the output's index.
    public func render(
        durationFrames: Int?, frameSizes: [Int]? = nil, outputs: Int,
        sink: (Int, UnsafePointer<Float>, Int) throws -> Void
    ) throws -> Summary {
        gh_enable_flush_to_zero()
        let channels = session.format.channels
        let initial = session.graph.streams
        if durationFrames == nil && (initial.isEmpty || initial.contains { $0.node.loop }) {
            throw RenderError.endless
        }
        try Self.check(events, session: session)
        let capacity = max(blockFrames, frameSizes?.max() ?? 0)
        let buffers = (0..<max(1, outputs)).map { _ in
            UnsafeMutablePointer<Float>.allocate(capacity: capacity * channels)
        }
        let buffer = buffers[0]
        // Several outputs render planar (one pointer per channel of each), then interleave per output.
        let planar = (0..<outputs).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: capacity * channels) }
        let channelTables = planar.map { p -> UnsafeMutablePointer<UnsafeMutablePointer<Float>> in
            let table = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
            table.initialize(repeating: p, count: channels)
            return table
        }
        let outputTable = UnsafeMutablePointer<UnsafePointer<UnsafeMutablePointer<Float>>>.allocate(
            capacity: max(1, outputs))
        defer {
            buffers.forEach { $0.deallocate() }
            planar.forEach { $0.deallocate() }
            channelTables.forEach { $0.deallocate() }
            outputTable.deallocate()
        }
        for (k, table) in channelTables.enumerated() {
            for c in 0..<channels { table[c] = planar[k] + c * capacity }
            outputTable[k] = UnsafePointer(table)
        }
        session.graph.start()
        var position = 0
        var peak: Float = 0
        var nextEvent = 0
        var sizeIndex = 0
        while durationFrames.map({ position < $0 }) ?? true {
            while nextEvent < events.count && events[nextEvent].frame <= position {
                let event = events[nextEvent]
                do { try session.apply(event.request) } catch {
                    throw RenderError.command(
                        seconds: Double(event.frame) / Double(session.format.sampleRate), request: event.request, error)
                }
                nextEvent += 1
            }
            let streams = session.streamsInUse
            var frames = frameSizes.map { $0[sizeIndex % $0.count] } ?? blockFrames
            sizeIndex += 1
            if let durationFrames { frames = min(frames, durationFrames - position) }
            if nextEvent < events.count { frames = min(frames, events[nextEvent].frame - position) }
            if let every = checkpointFrames { frames = min(frames, every - position % every) }
            for stream in streams {
                while !stream.canRender(frames: frames) { stream.waitToRender(frames: frames) }
            }
            let current = session.graph.streams
            let before = current.map { $0.counters.framesOut.load(ordering: .relaxed) }
            if outputs > 1 {
                session.engine.pointee.render(frames: frames, planarOutputs: outputTable, count: outputs)
                for k in 0..<outputs {
                    Interleaving.interleave(
                        from: planar[k], channelStride: capacity, channels: channels, frames: frames, into: buffers[k])
                }
            } else {
                session.engine.pointee.render(frames: frames, interleaved: buffer)
            }
            for stream in streams {
                if let failure = stream.failure { throw failure }
            }
            session.collectRetired()
            var keep = frames
            if durationFrames == nil && !current.isEmpty && current.allSatisfy(\.finished) {
                // Keep the block up to where the last stream ended (a stream's frames count from its own start).
                keep = zip(current, before).map { $0.counters.endFrame.load(ordering: .relaxed) - $1 }.max()!
                keep = max(0, min(frames, keep))
            }
            for k in 0..<max(1, outputs) {
                peak = max(peak, Bus.peak(buffers[k], channelStride: 0, channels: 1, from: 0, to: keep * channels))
                try sink(k, buffers[k], keep)
            }
            position += keep
            if let every = checkpointFrames, let checkpoint, position % every == 0 { try checkpoint(position) }
            if keep < frames { break }
        }
        let underruns = session.streamsInUse.reduce(0) { $0 + $1.counters.underruns.load(ordering: .relaxed) }
        let damage = session.streamsInUse.reduce(StreamDamage()) {
            StreamDamage(
                skippedBytes: $0.skippedBytes + $1.damage.skippedBytes,
                silencedFrames: $0.silencedFrames + $1.damage.silencedFrames)
        }
        return Summary(frames: position, peak: peak, underruns: underruns, damage: damage)
    }
}
