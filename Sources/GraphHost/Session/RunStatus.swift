/// What `status` answers about a playing graph: position, counters, streams, inputs, plugins, latency, MIDI control,
/// recording and memory.
public struct RunStatus: Sendable, Equatable {
    /// The graph file playing.
    public var graph: String
    public var position: Double
    public var playing: Bool
    public var underruns: Int
    public var xruns: Int
    public var overruns: Int
    public var quantum: Int
    public var callbacks: Int
    /// Monotonic time of the first callback that played sound (0: none yet).
    public var firstSoundNanos: Int
    public var streams: [Stream]
    public var streamsFinished: [Bool]
    public var inputs: [Input]
    /// The meters that are on, in the graph's node order.
    public var meters: [Meter]
    /// The loudness of the nodes whose loudness is watched, in the graph's node order.
    public var loudness: [Loudness]
    /// The DSP load of the last second (nil until a second was measured).
    public var load: DSPLoad?
    public var pluginBlockLengths: [String: Int]
    public var pluginOutputs: [String: [String: Float]]
    public var pluginProperties: [String: [String: String]]
    public var silencedSlices: [String: Int]
    /// The chain each chain node plays, by node id.
    public var chains: [String: String]
    public var appliedMessages: Int
    public var appliedNanos: Int
    /// The graph a swap being built goes to.
    public var building: String?
    public var midiControl: MIDIControl?
    /// The graph's routes and the streams they moved (nil: no routes).
    public var routes: Routes?
    /// The output device `service run` follows and the graph it chose (nil: not a service).
    public var device: Device?
    public var latency: Latency
    public var memory: Memory
    public var threads: Threads
    public var recording: Recording?
    /// The outputs sent as RTP: destination and the packets handed to PipeWire's RTP sink.
    public var rtpOutputs: [RTPOutput] = []

    /// An output sent as RTP. PipeWire's RTP sink keeps no count of its own: `packetsSent` is the frames played to it
    /// over the frames of a packet (what it has sent, less at most the one packet it is filling).
    public struct RTPOutput: Sendable, Equatable {
        public var id: String
        public var destination: String
        public var packetsSent: Int
    }

    /// A stream node's state, buffer, damage, tags and download.
    public struct Stream: Sendable, Equatable {
        public var id: String
        public var state: String
        public var url: String
        /// The place in the media, seconds.
        public var position: Double
        public var bufferFill: Double
        public var underruns: Int
        public var silencedFrames: Int
        public var skippedBytes: Int
        public var title: String?
        public var artist: String?
        public var duration: Double?
        public var media: String?
        public var codec: String?
        public var error: String?
        public var problem: String?
        /// A network stream's download (nil for a file).
        public var bytesLoaded: Int?
        public var totalBytes: Int?
        public var reconnects: Int?
        /// An RTP stream's packets, its receive latency (the audio buffered ahead of playback, averaged over half a
        /// second), ms, and the frames of silence played while it rebuffered.
        public var rtp: RTPReceiveCounters.Snapshot?
        public var latencyMs: Double?
        public var rebufferedFrames: Int?
    }

    /// A live input's level and counters.
    public struct Input: Sendable, Equatable {
        public var id: String
        public var playing: Bool
        public var dropouts: Int
        public var resamplerFrames: Int
        public var trimmedFrames: Int
        /// The latest slice's peak; silence reads -120.
        public var levelDBFS: Double
    }

    /// The graph's latency and the mixer inputs delayed to align it.
    public struct Latency: Sendable, Equatable {
        public var frames: Int
        public var milliseconds: Double
        public var mixerDelays: [String: [Int]]
    }

    public struct Memory: Sendable, Equatable {
        public var lockedBytes: Int
        public var notLockedBytes: Int
    }

    /// How many threads may render a slice, and how many steps the workers rendered so far.
    public struct Threads: Sendable, Equatable {
        public var count: Int
        public var workerSteps: Int
    }

    public struct Recording: Sendable, Equatable {
        public var path: String
        public var seconds: Double
        public var droppedFrames: Int
    }

    /// The MIDI control port, its mappings and the parameter `learn` waits to bind.
    public struct MIDIControl: Sendable, Equatable {
        public var map: MIDIControlMap
        /// `NODE PARAM`.
        public var learning: String?
    }
}

extension RunStatus {
    /// The routes' rules and the streams they moved.
    public struct Routes: Sendable, Equatable {
        public var rules: StreamRoutes
        public var moved: [StreamRouter.Move]

        public var json: JSONValue {
            .members([
                ("rules", rules.json),
                (
                    "moved",
                    .array(
                        moved.map {
                            .members([
                                ("node", .number(Double($0.nodeID))), ("application", .string($0.application)),
                                ("sink", .string($0.sink)),
                            ])
                        })
                ),
            ])
        }
    }

    /// The default sink a service follows (nil: none), the output route of its device it plays through (headphones,
    /// speakers) where the device reports one, and the graph its configuration maps it to.
    public struct Device: Sendable, Equatable {
        public var name: String?
        public var description: String?
        public var route: String?
        public var graph: String

        public var json: JSONValue {
            .members([
                ("name", name.map(JSONValue.string)), ("description", description.map(JSONValue.string)),
                ("route", route.map(JSONValue.string)), ("graph", .string(graph)),
            ])
        }
    }
}

extension RunStatus {
    public var json: JSONValue {
        .members([
            ("graph", .string(graph)),
            ("position", .number(position)), ("playing", .bool(playing)), ("underruns", .number(underruns)),
            ("xruns", .number(xruns)), ("overruns", .number(overruns)), ("quantum", .number(quantum)),
            ("callbacks", .number(callbacks)), ("firstSoundNanos", .number(firstSoundNanos)),
            ("streams", .array(streams.map(\.json))), ("streamsFinished", .array(streamsFinished.map(JSONValue.bool))),
            ("inputs", .array(inputs.map(\.json))), ("meters", .array(meters.map(\.json))),
            ("loudness", .array(loudness.map(\.json))),
            ("load", load?.json ?? JSONValue(.null)),
            ("pluginBlockLengths", .dictionary(pluginBlockLengths) { .number($0) }),
            ("pluginOutputs", .dictionary(pluginOutputs) { .dictionary($0) { .number($0) } }),
            ("pluginProperties", .dictionary(pluginProperties) { .dictionary($0) { .string($0) } }),
            ("silencedSlices", .dictionary(silencedSlices) { .number($0) }),
            ("chains", .dictionary(chains) { .string($0) }),
            ("applied", .object([("messages", .number(appliedMessages)), ("nanos", .number(appliedNanos))])),
            ("building", building.map(JSONValue.string)),
            ("midiControl", midiControl.map(\.json)), ("routes", routes.map(\.json)), ("device", device.map(\.json)),
            (
                "latency",
                .object([
                    ("frames", .number(latency.frames)), ("milliseconds", .number(latency.milliseconds)),
                    ("mixerDelays", .dictionary(latency.mixerDelays) { .array($0.map { .number($0) }) }),
                ])
            ),
            (
                "memory",
                .object([
                    ("lockedBytes", .number(memory.lockedBytes)), ("notLockedBytes", .number(memory.notLockedBytes)),
                ])
            ),
            ("threads", .object([("count", .number(threads.count)), ("workerSteps", .number(threads.workerSteps))])),
            (
                "rtpOutputs",
                .array(
                    rtpOutputs.map {
                        .object([
                            ("id", .string($0.id)), ("destination", .string($0.destination)),
                            ("packetsSent", .number($0.packetsSent)),
                        ])
                    })
            ),
            (
                "recording",
                recording.map {
                    .object([
                        ("path", .string($0.path)), ("seconds", .number($0.seconds)),
                        ("droppedFrames", .number($0.droppedFrames)),
                    ])
                }
            ),
        ])
    }
}

extension RunStatus.Stream {
    public var json: JSONValue {
        .members([
            ("id", .string(id)), ("state", .string(state)), ("url", .string(url)), ("position", .number(position)),
            ("bufferFill", .number(bufferFill)), ("underruns", .number(underruns)),
            ("silencedFrames", .number(silencedFrames)),
            ("skippedBytes", .number(skippedBytes)), ("title", title.map(JSONValue.string)),
            ("artist", artist.map(JSONValue.string)),
            ("duration", duration.map(JSONValue.number)), ("media", media.map(JSONValue.string)),
            ("codec", codec.map(JSONValue.string)),
            ("error", error.map(JSONValue.string)), ("problem", problem.map(JSONValue.string)),
            ("bytesLoaded", bytesLoaded.map { .number($0) }), ("totalBytes", totalBytes.map { .number($0) }),
            ("reconnects", reconnects.map { .number($0) }),
            (
                "rtp",
                rtp.map { r in
                    .members([
                        ("received", .number(r.received)), ("lost", .number(r.lost)), ("late", .number(r.late)),
                        ("malformed", .number(r.malformed)),
                        (
                            "dropped",
                            .object([
                                ("foreignSender", .number(r.dropped.foreignSender)),
                                ("payloadType", .number(r.dropped.payloadType)),
                                ("partialFrames", .number(r.dropped.partialFrames)),
                                ("oversized", .number(r.dropped.oversized)),
                            ])
                        ),
                        ("takeovers", .number(r.takeovers)), ("concealedFrames", .number(r.concealedFrames)),
                        ("resyncs", .number(r.resyncs)), ("insertedFrames", .number(r.insertedFrames)),
                        ("droppedFrames", .number(r.droppedFrames)),
                        ("rebufferedFrames", rebufferedFrames.map { .number($0) }),
                        ("latencyMs", latencyMs.map(JSONValue.number)),
                    ])
                }
            ),
        ])
    }
}

extension RunStatus.Input {
    public var json: JSONValue {
        .object([
            ("id", .string(id)), ("playing", .bool(playing)), ("dropouts", .number(dropouts)),
            ("resamplerFrames", .number(resamplerFrames)), ("trimmedFrames", .number(trimmedFrames)),
            ("levelDBFS", .number(levelDBFS)),
        ])
    }
}

extension RunStatus.MIDIControl {
    public var json: JSONValue {
        .members([
            ("port", .string(map.port)),
            (
                "cc",
                .array(
                    map.controls.map { m in
                        .object([
                            ("channel", .number(m.channel ?? 0)), ("cc", .number(m.controller)),
                            ("node", .string(m.node)),
                            ("param", .string(m.parameter.description)), ("min", .number(m.minimum)),
                            ("max", .number(m.maximum)),
                            ("curve", .string(m.curve.rawValue)),
                        ])
                    })
            ),
            (
                "program",
                .array(
                    map.programs.map { m in
                        .object([
                            ("channel", .number(m.channel ?? 0)), ("program", .number(m.program)),
                            ("command", .string(m.line)),
                        ])
                    })
            ),
            ("learning", learning.map(JSONValue.string)),
        ])
    }
}
