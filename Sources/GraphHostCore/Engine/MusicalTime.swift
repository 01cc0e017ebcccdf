/// The graph's musical transport (tempo, meter, rolling), which plugins receive as time:Position objects. The engine
/// moves `frame` on while it rolls and bumps `revision` at every change, so each plugin is told once per change and
/// counts on from there, as the LV2 time extension intends.
public struct MusicalTime: Equatable {
    /// What a graph file or a command sets.
    public struct Settings: Equatable, Sendable {
        public var beatsPerMinute: Double
        public var beatsPerBar: Double
        public var beatUnit: Int
        public var rolling: Bool

        public init(beatsPerMinute: Double = 120, beatsPerBar: Double = 4, beatUnit: Int = 4, rolling: Bool = true) {
            self.beatsPerMinute = beatsPerMinute
            self.beatsPerBar = beatsPerBar
            self.beatUnit = beatUnit
            self.rolling = rolling
        }
    }

    public var settings = Settings()
    /// Frames since the graph started (the transport's position).
    public var frame: Int64 = 0
    public var sampleRate: Double
    /// True while the output plays (not paused); the transport rolls only then.
    public var playing = true
    /// 0 while the graph declares no transport (plugins are told nothing); bumped at every change after that.
    public var revision = 0

    public init(sampleRate: Double) { self.sampleRate = sampleRate }

    /// Beats per second when rolling, else 0 (time:speed is rolling's 1 or 0).
    public var speed: Double { settings.rolling && playing ? 1 : 0 }
    /// Beats since the start.
    public var beats: Double { Double(frame) / sampleRate * settings.beatsPerMinute / 60 }

    /// A change sent to the render world.
    public enum Change {
        case settings(Settings)
        case playing(Bool)
    }

    @_noLocks
    public mutating func apply(_ change: Change) {
        switch change {
        case .settings(let s): settings = s
        case .playing(let on):
            guard on != playing else { return }
            playing = on
            if revision == 0 { return }
        }
        revision += 1
    }

    @_noLocks
    public mutating func advance(_ frames: Int) {
        if speed != 0 { frame += Int64(frames) }
    }
}
