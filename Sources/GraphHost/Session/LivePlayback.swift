import FoundationEssentials
import Glibc

/// What `LiveRunner` drives: a stream the graph plays into (`PipeWirePlayer`, or a stand-in in tests).
public protocol LivePlayback: AnyObject {
    var counters: PlaybackCounters { get }
    /// A fatal stream error, once one happened.
    var streamError: String? { get }
    /// The daemon went away; the graph keeps its state until `reconnect()` succeeds.
    var disconnected: Bool { get }
    /// The daemon has no sink for the stream yet ("no node available").
    var noSink: Bool { get }
    var streaming: Bool { get }
    func setRecordTap(_ tap: RecordTap?)
    func connect() throws
    /// Drops the dead connection and tries once to connect again; false while that fails.
    func reconnect() -> Bool
    /// Fades out and disconnects; the callback no longer renders afterwards.
    func stopStream()
    /// After a swap: streams for the live inputs the graph now has.
    func syncLiveInputs(_ inputs: [LiveInputSpec])
    /// After a swap: plays the outputs where the new graph says (connecting again when that changed).
    func reroute(_ routing: OutputRouting)
    /// Tells the daemon the graph's own latency in frames (plugins, isolated nodes), for others to compensate.
    func reportGraphLatency(frames: Int)
    /// Whether the stream may be deactivated while the graph rests (`setIdle`).
    var canIdle: Bool { get }
    /// Deactivated: the process callback is not woken until `setIdle(false)`.
    var idle: Bool { get }
    func setIdle(_ idle: Bool)
    /// The daemon's own figure for the stream's node since the last call (`DSPLoad.pipeWire`).
    func takePipeWireLoad() -> PipeWireLoadReading
    /// Idles like a sink after this many quiet seconds (`PlaybackOptions.idleAfterSeconds`); nil: it does not.
    var idleAfterSeconds: Double? { get }
    /// Whether graphhost keeps the graph running itself; false lets it rest until an application plays into a sink.
    var holding: Bool { get }
    func setHolding(_ on: Bool)
    /// Called (on another thread) when the daemon starts, pauses or fails the graph's stream or goes away, while
    /// idling like a sink is on.
    func setOnStreamChange(_ body: @escaping @Sendable () -> Void)
}

extension LivePlayback {
    public func syncLiveInputs(_ inputs: [LiveInputSpec]) {}
    public func reportGraphLatency(frames: Int) {}
    public func reroute(_ routing: OutputRouting) {}
    public var canIdle: Bool { false }
    public var idle: Bool { false }
    public func setIdle(_ idle: Bool) {}
    public func takePipeWireLoad() -> PipeWireLoadReading { .unavailable("not played through PipeWire") }
    public var idleAfterSeconds: Double? { nil }
    public var holding: Bool { true }
    public func setHolding(_ on: Bool) {}
    public func setOnStreamChange(_ body: @escaping @Sendable () -> Void) {}
}

extension PipeWirePlayer: LivePlayback {
    public func stopStream() { stop() }
    public var idleAfterSeconds: Double? { options.idleAfterSeconds }
    public func setOnStreamChange(_ body: @escaping @Sendable () -> Void) { onStreamChange = body }
}

/// The time `LiveRunner` reads and waits on (the system clock, or a stand-in that tests advance).
public protocol LiveClock {
    var now: Date { get }
    func sleep(seconds: Double)
}

/// The system's clock.
public struct SystemClock: LiveClock {
    public init() {}
    public var now: Date { Date() }
    public func sleep(seconds: Double) { usleep(UInt32(seconds * 1e6)) }
}
