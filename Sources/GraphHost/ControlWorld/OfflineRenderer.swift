import CRenderSupport

/// A command scheduled at an exact frame of an offline render: a node command, `pause` or `play`.
public struct TimedCommand: Equatable {
    public var frame: Int
    public var request: ControlRequest

    public init(frame: Int, request: ControlRequest) {
        self.frame = frame
        self.request = request
    }

    public init(frame: Int, command: Command) {
        self.init(frame: frame, request: .node(command))
    }

    /// The node command, if this is one.
    public var command: Command? {
        if case .node(let c) = request { return c }
        return nil
    }
}

extension CompiledGraph {
    /// Throws the reason when a timed request cannot apply to an offline render.
    public func check(_ request: ControlRequest) throws {
        switch request {
        case .node(let command): try check(command)
        case .pause, .play: break
        case .status, .list, .quit: throw CommandError("'\(request)' is not a command for an offline render")
        }
    }

    public func apply(_ request: ControlRequest) throws {
        switch request {
        case .node(let command): try apply(command)
        case .pause: try setPlaying(false)
        case .play: try setPlaying(true)
        case .status, .list, .quit: try check(request)
        }
    }
}

/// Drives a compiled graph as fast as possible: waits (control side) until every stream has the
/// audio the next slice needs, renders it with the same `RenderPlan` the real-time thread uses,
/// and hands the interleaved result to a sink.
public struct OfflineRenderer {
    public var graph: CompiledGraph
    /// Frames per render call; may differ from the plan's maxFrames (the plan splits larger calls).
    public var blockFrames: Int
    public var events: [TimedCommand]

    public init(graph: CompiledGraph, blockFrames: Int? = nil, events: [TimedCommand] = []) {
        self.graph = graph
        self.blockFrames = blockFrames ?? graph.plan.maxFrames
        self.events = events.sorted { $0.frame < $1.frame }
    }

    /// What a render produced.
    public struct Summary {
        public var frames: Int
        public var peak: Float
        public var underruns: Int
    }

    /// Renders until every stream finished (or `durationFrames`); `sink` receives each block.
    /// `frameSizes`, when given, overrides the slice sizes cyclically (for tests of variable slicing).
    public func render(durationFrames: Int?, frameSizes: [Int]? = nil,
                       sink: (UnsafePointer<Float>, Int) throws -> Void) throws -> Summary {
        graphhost_enable_flush_to_zero()
        let plan = graph.plan
        let streams = graph.streams
        if durationFrames == nil && (streams.isEmpty || streams.contains { $0.node.loop }) {
            throw CommandError("this graph never ends by itself (no stream, or a looping stream): give --duration")
        }
        for event in events { try graph.check(event.request) }
        let capacity = max(blockFrames, frameSizes?.max() ?? 0)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: capacity * plan.channels)
        defer { buffer.deallocate() }
        graph.start()
        var position = 0
        var peak: Float = 0
        var nextEvent = 0
        var sizeIndex = 0
        while durationFrames.map({ position < $0 }) ?? true {
            while nextEvent < events.count && events[nextEvent].frame <= position {
                try graph.apply(events[nextEvent].request)
                nextEvent += 1
            }
            var frames = frameSizes.map { $0[sizeIndex % $0.count] } ?? blockFrames
            sizeIndex += 1
            if let durationFrames { frames = min(frames, durationFrames - position) }
            if nextEvent < events.count { frames = min(frames, events[nextEvent].frame - position) }
            for stream in streams {
                while !stream.canRender(frames: frames) { stream.wakeup.waitForData() }
            }
            plan.render(frames: frames, interleaved: buffer)
            for stream in streams {
                stream.wakeup.signalSpace()
                if let failure = stream.failure { throw failure }
            }
            var keep = frames
            if durationFrames == nil && streams.allSatisfy(\.finished) {
                keep = streams.map { $0.counters.endFrame.load(ordering: .relaxed) }.max()! - position
            }
            for i in 0..<(keep * plan.channels) { peak = max(peak, abs(buffer[i])) }
            try sink(buffer, keep)
            position += keep
            if keep < frames { break }
        }
        let underruns = streams.reduce(0) { $0 + $1.counters.underruns.load(ordering: .relaxed) }
        return Summary(frames: position, peak: peak, underruns: underruns)
    }
}
