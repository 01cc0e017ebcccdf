import Atomics
import CLV2

/// The render side of an `lv2` node: one or more plugin instances (a mono plugin runs once per channel),
/// their port wiring, and their control values. Everything was instantiated and activated by the control world.
public struct LV2Kernel {
    /// Instances ("copies"): one for a plugin whose audio ports match the bus, one per channel for a mono plugin.
    public let copies: Int
    public let handles: UnsafeMutablePointer<LV2_Handle?>
    public let descriptors: UnsafeMutablePointer<UnsafePointer<LV2_Descriptor>>
    /// Audio input and output port indices, `inputsPerCopy` and `outputsPerCopy` per copy. Port p of a single copy
    /// is channel p; copy c of a mono plugin run per channel is channel c. One input on a wider bus reads the
    /// channels' average (`downmix`); one output on a wider bus is copied to every channel.
    public let audioInputs: UnsafeMutablePointer<UInt32>
    public let audioOutputs: UnsafeMutablePointer<UInt32>
    public let inputsPerCopy: Int
    public let outputsPerCopy: Int
    /// The averaged channels a single-input plugin reads on a wider bus; nil otherwise.
    public let downmix: UnsafeMutablePointer<Float>?
    /// Control values, `portCount` per copy (indexed by port index).
    public let controls: UnsafeMutablePointer<Float>
    public let portCount: Int
    /// Atom input sequences to clear before each run: port buffer pointers and whether the port is an input.
    public let atomBuffers: UnsafeMutablePointer<UnsafeMutablePointer<LV2_Atom_Sequence>>
    public let atomIsInput: UnsafeMutablePointer<Bool>
    public let atomCapacities: UnsafeMutablePointer<UInt32>
    public let atomCount: Int
    public let sequenceType: UInt32
    public let chunkType: UInt32
    /// One worker channel per copy, or nil when the plugin has no worker.
    public let workers: UnsafeMutablePointer<LV2WorkerChannel>?
    /// How much of the plugin's output is heard (1) versus its input (0), gliding on pause and resume; then the
    /// output guard's gain (`wet + 1`), 0 after a silenced slice and gliding back to 1.
    public let wet: UnsafeMutablePointer<SmoothedGain>
    /// Set once the plugin is faded out and no longer run, so its state may be restored.
    public let paused: UnsafeAtomic<Bool>
    public let fadeSamples: Int

    /// A control port's new value (already clamped); pause (fade out, then stop running the plugin so its state
    /// may be restored) and resume; bypass on or off (the plugin fades out but keeps running, so un-bypassing is
    /// clean).
    public enum Change {
        case control(port: Int, value: Float)
        case pause
        case resume
        case bypass(Bool)
    }
    /// Ports fed by links of their own (sidechains, CV inputs): the port index and the channel of its bus to read,
    /// or -1 for the channels' average (made in `portSignals`, `maxFrames` per port).
    public struct PortFeed {
        public var port: UInt32
        public var channel: Int
        public init(port: UInt32, channel: Int) {
            self.port = port
            self.channel = channel
        }
    }
    public var portFeeds: UnsafeMutablePointer<PortFeed>?
    public var portFeedCount = 0
    public var portSignals: UnsafeMutablePointer<Float>?
    /// Output buses 1, 2, … made of output ports linked by name (a crossover's bands): for each bus and channel
    /// (`portOutputCount` × channels), the signal it copies: k ≥ 0 is `portOutputSignals + k × channelStride` (a port
    /// connected there once), k < 0 is channel -1 - k of the main output.
    public var portOutputCount = 0
    public var portOutputSources: UnsafeMutablePointer<Int>?
    public var portOutputSignals: UnsafeMutablePointer<Float>?
    /// patch:Set messages (atom objects) the control world queued for the plugin, copied into the control sequence
    /// (the atom input `controlSequence` of each copy's `atomPortsPerCopy`) at the start of the next run; nil when
    /// the plugin has no properties.
    public var patchMessages: ByteRing?
    /// An instrument reads a `midi` node's event sequence from its input bus into its MIDI port (`midiPort` among a
    /// copy's atom ports); its dry signal is `silence`.
    public var readsMIDI = false
    public var midiPort = -1
    public var silence: UnsafeMutablePointer<Float>?
    /// A plugin with audio inputs reads events from its port-linked input bus `eventBus` (-1: none) into `midiPort`.
    public var eventBus = -1
    /// The bytes an event bus holds (events past it are never read).
    public var eventCapacity = 0
    /// A MIDI processor's MIDI output port among a copy's atom ports, whose events become the node's output bus.
    public var midiOutPort = -1
    /// The plugin's notify port among the first copy's atom ports: the patch:Set objects it writes there (a property's
    /// new value) are copied into `reports` for the control world; nil when the plugin has no properties.
    public var notifyPort = -1
    public var reports: ByteRing?
    public var objectType: UInt32 = 0
    public var patchSetType: UInt32 = 0
    public var controlSequence = -1
    public var atomPortsPerCopy = 0
    public var messageScratch: UnsafeMutableRawPointer?
    public static let messageScratchSize = 8192
    /// The atom input that takes time:Position among a copy's atom ports (-1: none), the musical time's revision last
    /// written there, room to build the object, and its URIDs.
    public var positionPort = -1
    public var positionSeen: UnsafeMutablePointer<Int>?
    public var positionScratch: UnsafeMutableRawPointer?
    public var positionURIDs = PositionURIDs()
    public static let positionSize = 8 + 8 + 7 * 24
    public struct PositionURIDs {
        public var object: UInt32 = 0, position: UInt32 = 0, long: UInt32 = 0, float: UInt32 = 0, int: UInt32 = 0
        /// time:frame, speed, bar, barBeat, beatUnit, beatsPerBar, beatsPerMinute.
        public var frame: UInt32 = 0, speed: UInt32 = 0, bar: UInt32 = 0, barBeat: UInt32 = 0
        public var beatUnit: UInt32 = 0, beatsPerBar: UInt32 = 0, beatsPerMinute: UInt32 = 0
        public init() {}
    }
    /// The buffer each port of each copy was last connected to (`copies` × `portCount`): a port is connected again
    /// only when its buffer changes (a new plan), as a host that connects once would.
    public var connected: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    /// True while bypassed: the plugin runs even when fully faded out.
    public let runsWhenSilent: UnsafeMutablePointer<Bool>
    /// Slices whose output held NaN, Inf or a burst above +24 dBFS: each is replaced by silence, never passed on, and
    /// the node fades back in over `fadeSamples` once its output is safe again.
    public let silencedSlices: UnsafeAtomic<Int>

    /// Wraps instances the control world instantiated, activated and connected.
    public init(
        copies: Int,
        handles: UnsafeMutablePointer<LV2_Handle?>,
        descriptors: UnsafeMutablePointer<UnsafePointer<LV2_Descriptor>>,
        audioInputs: UnsafeMutablePointer<UInt32>,
        audioOutputs: UnsafeMutablePointer<UInt32>,
        inputsPerCopy: Int,
        outputsPerCopy: Int,
        downmix: UnsafeMutablePointer<Float>?,
        controls: UnsafeMutablePointer<Float>,
        portCount: Int,
        atomBuffers: UnsafeMutablePointer<UnsafeMutablePointer<LV2_Atom_Sequence>>,
        atomIsInput: UnsafeMutablePointer<Bool>,
        atomCapacities: UnsafeMutablePointer<UInt32>,
        atomCount: Int,
        sequenceType: UInt32,
        chunkType: UInt32,
        workers: UnsafeMutablePointer<LV2WorkerChannel>?,
        wet: UnsafeMutablePointer<SmoothedGain>,
        paused: UnsafeAtomic<Bool>,
        fadeSamples: Int,
        runsWhenSilent: UnsafeMutablePointer<Bool>,
        silencedSlices: UnsafeAtomic<Int>
    ) {
        self.copies = copies
        self.handles = handles
        self.descriptors = descriptors
        self.audioInputs = audioInputs
        self.audioOutputs = audioOutputs
        self.inputsPerCopy = inputsPerCopy
        self.outputsPerCopy = outputsPerCopy
        self.downmix = downmix
        self.controls = controls
        self.portCount = portCount
        self.atomBuffers = atomBuffers
        self.atomIsInput = atomIsInput
        self.atomCapacities = atomCapacities
        self.atomCount = atomCount
        self.sequenceType = sequenceType
        self.chunkType = chunkType
        self.workers = workers
        self.wet = wet
        self.paused = paused
        self.fadeSamples = fadeSamples
        self.runsWhenSilent = runsWhenSilent
        self.silencedSlices = silencedSlices
    }

    /// Applies a change at the start of a render call.
    @_noLocks
    public mutating func apply(_ change: Change) {
        switch change {
        case .pause:
            runsWhenSilent.pointee = false
            wet.pointee.glide(to: 0, over: fadeSamples)
        case .bypass(let on):
            runsWhenSilent.pointee = on
            wet.pointee.glide(to: on ? 0 : 1, over: fadeSamples)
        case .resume:
            paused.store(false, ordering: .releasing)
            wet.pointee.glide(to: 1, over: fadeSamples)
        case .control(let port, let value):
            guard port >= 0 && port < portCount else { return }
            for copy in 0..<copies { controls[copy * portCount + port] = value }
        }
    }

    /// `guardOutput`: replace output holding NaN, Inf or a burst by silence (the engine asks for it once its output
    /// held such values, so the node can be named).
    @_noLocks
    public mutating func process(
        input: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>,
        channelStride: Int, channels: Int, frames: Int, guardOutput: Bool = false,
        portInputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>? = nil,
        portOutputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>? = nil,
        time: UnsafePointer<MusicalTime>? = nil
    ) {
        var events: UnsafeRawPointer? = readsMIDI ? UnsafeRawPointer(input) : nil
        if eventBus >= 0, let portInputs { events = UnsafeRawPointer(portInputs[eventBus]) }
        let input = readsMIDI ? (silence ?? input) : input
        if midiOutPort >= 0 {
            processEvents(
                events, input: input, output: output, channelStride: channelStride, channels: channels, frames: frames,
                time: time)
            return
        }
        if wet.pointee.isSteady && wet.pointee.current == 0 && !runsWhenSilent.pointee {
            // Paused: the plugin is not run (its state may be being restored); the input passes through.
            for c in 0..<channels {
                let src = input + c * channelStride
                let dst = output + c * channelStride
                for f in 0..<frames { dst[f] = src[f] }
            }
            if let portOutputs {
                clearPortOutputs(portOutputs, channelStride: channelStride, channels: channels, frames: frames)
            }
            paused.store(true, ordering: .releasing)
            return
        }
        if let portInputs { feedPorts(portInputs, channelStride: channelStride, channels: channels, frames: frames) }
        runPlugins(
            input: input, output: output, channelStride: channelStride, channels: channels, frames: frames,
            events: events, time: time)
        if outputsPerCopy == 0 {
            // No audio output (an analyser, a control-only plugin): the input passes on.
            for c in 0..<channels {
                let src = input + c * channelStride
                let dst = output + c * channelStride
                for f in 0..<frames { dst[f] = src[f] }
            }
            return
        }
        if let portOutputs {
            fillPortOutputs(portOutputs, main: output, channelStride: channelStride, channels: channels, frames: frames)
        }
        if guardOutput
            && !(Bus.isSafe(output, channelStride: channelStride, channels: channels, frames: frames)
                && portOutputsAreSafe(portOutputs, channelStride: channelStride, channels: channels, frames: frames))
        {
            Bus.clear(output, channelStride: channelStride, channels: channels, from: 0, to: frames)
            if let portOutputs {
                clearPortOutputs(portOutputs, channelStride: channelStride, channels: channels, frames: frames)
            }
            silencedSlices.wrappingIncrement(ordering: .relaxed)
            (wet + 1).pointee.current = 0
            (wet + 1).pointee.glide(to: 1, over: fadeSamples)
            return
        }
        if let portOutputs {
            // Port outputs have no dry signal: they fade with the plugin (bypass, pause, the guard's fade-in).
            for k in 0..<portOutputCount {
                var plugin = wet.pointee
                var guarded = (wet + 1).pointee
                plugin.scale(portOutputs[k], channelStride: channelStride, channels: channels, frames: frames)
                guarded.scale(portOutputs[k], channelStride: channelStride, channels: channels, frames: frames)
            }
        }
        wet.pointee.blend(
            input: input, output: output, channelStride: channelStride, channels: channels, frames: frames)
        (wet + 1).pointee.scale(output, channelStride: channelStride, channels: channels, frames: frames)
    }

    /// Copies each port-linked output bus's channels from their ports (or from the main output's channels).
    @_noLocks
    mutating func fillPortOutputs(
        _ buses: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, main: UnsafeMutablePointer<Float>,
        channelStride: Int, channels: Int, frames: Int
    ) {
        guard let portOutputSources, let portOutputSignals else { return }
        for k in 0..<portOutputCount {
            for c in 0..<channels {
                let source = portOutputSources[k * channels + c]
                let from =
                    source >= 0 ? portOutputSignals + source * channelStride : main + (-1 - source) * channelStride
                let to = buses[k] + c * channelStride
                for f in 0..<frames { to[f] = from[f] }
            }
        }
    }

    @_noLocks
    mutating func clearPortOutputs(
        _ buses: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, channelStride: Int, channels: Int, frames: Int
    ) {
        for k in 0..<portOutputCount {
            Bus.clear(buses[k], channelStride: channelStride, channels: channels, from: 0, to: frames)
        }
    }

    @_noLocks
    mutating func portOutputsAreSafe(
        _ buses: UnsafeMutablePointer<UnsafeMutablePointer<Float>>?, channelStride: Int, channels: Int, frames: Int
    ) -> Bool {
        guard let buses else { return true }
        for k in 0..<portOutputCount
        where !Bus.isSafe(buses[k], channelStride: channelStride, channels: channels, frames: frames) { return false }
        return true
    }

    /// Connects each linked port to its signal: one channel of its bus, or the average of the channels.
    @_noLocks
    mutating func feedPorts(
        _ buses: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, channelStride: Int, channels: Int, frames: Int
    ) {
        guard let portFeeds, let portSignals else { return }
        for k in 0..<portFeedCount where k != eventBus {
            let feed = portFeeds[k]
            let bus = buses[k]
            var signal = portSignals + k * channelStride
            if feed.channel >= 0 {
                signal = bus + min(feed.channel, channels - 1) * channelStride
            } else {
                let scale = 1 / Float(channels)
                for f in 0..<frames {
                    var sum: Float = 0
                    for c in 0..<channels { sum += bus[c * channelStride + f] }
                    signal[f] = sum * scale
                }
            }
            connect(copy: 0, port: feed.port, to: UnsafeMutableRawPointer(signal))
        }
    }

    /// A plugin that sends MIDI instead of audio (a MIDI processor, a MIDI generator, an onset trigger): runs it on
    /// its inputs (the input bus's events, or its audio) and writes its MIDI output as the output bus's events.
    /// Bypassed or paused, the input events pass through unchanged (none for a plugin without MIDI input).
    @_noLocks
    mutating func processEvents(
        _ events: UnsafeRawPointer?, input: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>,
        channelStride: Int, channels: Int, frames: Int, time: UnsafePointer<MusicalTime>?
    ) {
        // Events switch at once; the wet gain still glides, so bypass and pause take their usual time.
        for _ in 0..<frames { _ = wet.pointee.next() }
        let passing = wet.pointee.isSteady && wet.pointee.current == 0
        var source = events
        if passing {
            paused.store(!runsWhenSilent.pointee, ordering: .releasing)
        } else {
            runPlugins(
                input: input, output: output, channelStride: channelStride, channels: channels, frames: frames,
                events: events, time: time)
            source = UnsafeRawPointer(atomBuffers[midiOutPort])
        }
        // A sequence the plugin did not write (still the empty chunk it was handed) sends nothing.
        var size = 0
        if let source, source.load(fromByteOffset: 4, as: UInt32.self) == sequenceType {
            size = min(8 + Int(source.load(as: UInt32.self)), eventCapacity)
        }
        let destination = UnsafeMutableRawPointer(output).assumingMemoryBound(to: UInt8.self)
        let bytes = (source ?? UnsafeRawPointer(output)).assumingMemoryBound(to: UInt8.self)
        for i in 0..<max(16, size) { destination[i] = i < size ? bytes[i] : 0 }
        if size < 16 {
            UnsafeMutableRawPointer(output).storeBytes(of: UInt32(8), as: UInt32.self)
            UnsafeMutableRawPointer(output).storeBytes(of: sequenceType, toByteOffset: 4, as: UInt32.self)
        }
    }

    /// Connects a port of a copy to `data` unless it is connected there already.
    @_noLocks @inline(__always)
    mutating func connect(copy: Int, port: UInt32, to data: UnsafeMutableRawPointer) {
        if let connected {
            let slot = connected + copy * portCount + Int(port)
            if slot.pointee == data { return }
            slot.pointee = data
        }
        // connect_port stores a pointer (real-time safe per the LV2 specification).
        _unsafePerformance { descriptors[copy].pointee.connect_port(handles[copy], port, data) }
    }

    /// Copies the patch:Set objects of the notify sequence into `reports` (objects that do not fit are dropped).
    @_noLocks
    mutating func report(from sequence: UnsafeRawPointer, into reports: ByteRing) {
        guard sequence.load(fromByteOffset: 4, as: UInt32.self) == sequenceType else { return }
        let end = 8 + Int(sequence.load(as: UInt32.self))
        var offset = 16
        while offset + 16 <= end {
            let size = Int(sequence.load(fromByteOffset: offset + 8, as: UInt32.self))
            let type = sequence.load(fromByteOffset: offset + 12, as: UInt32.self)
            if type == objectType && size >= 8
                && sequence.load(fromByteOffset: offset + 20, as: UInt32.self) == patchSetType
            {
                _ = reports.write(sequence + offset + 8, size: 8 + size)
            }
            offset += (16 + size + 7) & ~7
        }
    }

    /// Builds the time:Position object (atom header included) for `time` at `object`: frame, speed, bar, beat in the
    /// bar, beat unit, beats per bar and tempo.
    @_noLocks
    mutating func writePosition(_ time: MusicalTime, into object: UnsafeMutableRawPointer) {
        let u = positionURIDs
        object.storeBytes(of: UInt32(Self.positionSize - 8), as: UInt32.self)
        object.storeBytes(of: u.object, toByteOffset: 4, as: UInt32.self)
        object.storeBytes(of: UInt32(0), toByteOffset: 8, as: UInt32.self)
        object.storeBytes(of: u.position, toByteOffset: 12, as: UInt32.self)
        let beats = Double(time.frame) / time.sampleRate * time.settings.beatsPerMinute / 60
        let perBar = time.settings.beatsPerBar < 1 ? 1 : time.settings.beatsPerBar
        let bar = Double(Int64(beats / perBar))  // beats ≥ 0: truncation is the floor
        let keys = (u.frame, u.speed, u.bar, u.barBeat, u.beatUnit, u.beatsPerBar, u.beatsPerMinute)
        let types = (u.long, u.float, u.long, u.float, u.int, u.float, u.float)
        Self.positionProperty(object, 0, keys.0, types.0, size: 8).storeBytes(of: time.frame, as: Int64.self)
        Self.positionProperty(object, 1, keys.1, types.1, size: 4).storeBytes(
            of: Float(time.settings.rolling && time.playing ? 1 : 0), as: Float.self)
        Self.positionProperty(object, 2, keys.2, types.2, size: 8).storeBytes(of: Int64(bar), as: Int64.self)
        Self.positionProperty(object, 3, keys.3, types.3, size: 4).storeBytes(
            of: Float(beats - bar * perBar), as: Float.self)
        Self.positionProperty(object, 4, keys.4, types.4, size: 4).storeBytes(
            of: Int32(time.settings.beatUnit), as: Int32.self)
        Self.positionProperty(object, 5, keys.5, types.5, size: 4).storeBytes(
            of: Float(time.settings.beatsPerBar), as: Float.self)
        Self.positionProperty(object, 6, keys.6, types.6, size: 4).storeBytes(
            of: Float(time.settings.beatsPerMinute), as: Float.self)
    }

    /// Writes the `n`-th property header of a time:Position object (24 bytes each, after the object's 16) and returns
    /// where its value goes.
    @_noLocks
    static func positionProperty(
        _ object: UnsafeMutableRawPointer, _ n: Int, _ key: UInt32, _ type: UInt32, size: UInt32
    ) -> UnsafeMutableRawPointer {
        let at = object + 16 + 24 * n
        at.storeBytes(of: key, as: UInt32.self)
        at.storeBytes(of: UInt32(0), toByteOffset: 4, as: UInt32.self)
        at.storeBytes(of: size, toByteOffset: 8, as: UInt32.self)
        at.storeBytes(of: type, toByteOffset: 12, as: UInt32.self)
        at.storeBytes(of: UInt64(0), toByteOffset: 16, as: UInt64.self)
        return at + 16
    }

    /// Copies the events of the atom sequence at `source` (a `midi` node's output) into each copy's MIDI port.
    @_noLocks
    mutating func copyEvents(from source: UnsafeRawPointer) {
        let end = min(8 + Int(source.load(as: UInt32.self)), eventCapacity)
        var offset = 16
        while offset + 16 <= end {
            let frame = source.load(fromByteOffset: offset, as: Int64.self)
            let size = 8 + Int(source.load(fromByteOffset: offset + 8, as: UInt32.self))
            for copy in 0..<copies {
                let a = copy * atomPortsPerCopy + midiPort
                appendEvent(
                    source + offset + 8, size: size, frame: frame, to: atomBuffers[a], capacity: Int(atomCapacities[a]))
            }
            offset += (8 + size + 7) & ~7
        }
    }

    /// Appends an event at `frame` holding the atom `message` to an input sequence; one that does not fit is dropped.
    @_noLocks
    mutating func appendEvent(
        _ message: UnsafeRawPointer, size: Int, frame: Int64, to sequence: UnsafeMutablePointer<LV2_Atom_Sequence>,
        capacity: Int
    ) {
        let used = Int(sequence.pointee.atom.size)
        let padded = (8 + size + 7) & ~7
        guard 8 + used + padded <= capacity else { return }
        let event = UnsafeMutableRawPointer(sequence) + 8 + used
        event.storeBytes(of: frame, as: Int64.self)
        let source = message.assumingMemoryBound(to: UInt8.self)
        let destination = (event + 8).assumingMemoryBound(to: UInt8.self)
        for i in 0..<size { destination[i] = source[i] }
        sequence.pointee.atom.size = UInt32(used + padded)
    }

    @_noLocks
    mutating func runPlugins(
        input: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>, channelStride: Int, channels: Int,
        frames: Int, events: UnsafeRawPointer? = nil, time: UnsafePointer<MusicalTime>? = nil
    ) {
        if let downmix {
            let scale = 1 / Float(channels)
            for f in 0..<frames {
                var sum: Float = 0
                for c in 0..<channels { sum += input[c * channelStride + f] }
                downmix[f] = sum * scale
            }
        }
        for a in 0..<atomCount {
            let sequence = atomBuffers[a]
            if atomIsInput[a] {
                sequence.pointee.atom.size = UInt32(MemoryLayout<LV2_Atom_Sequence_Body>.size)
                sequence.pointee.atom.type = sequenceType
                sequence.pointee.body.unit = 0
                sequence.pointee.body.pad = 0
            } else {
                sequence.pointee.atom.size = atomCapacities[a] - UInt32(MemoryLayout<LV2_Atom>.size)
                sequence.pointee.atom.type = chunkType
            }
        }
        if let time, let positionSeen, let positionScratch, positionPort >= 0,
            time.pointee.revision != 0 && time.pointee.revision != positionSeen.pointee
        {
            positionSeen.pointee = time.pointee.revision
            writePosition(time.pointee, into: positionScratch)
            for copy in 0..<copies {
                let a = copy * atomPortsPerCopy + positionPort
                appendEvent(
                    positionScratch, size: Self.positionSize, frame: 0, to: atomBuffers[a],
                    capacity: Int(atomCapacities[a]))
            }
        }
        if let patchMessages, let messageScratch, controlSequence >= 0 {
            while let size = patchMessages.read(into: messageScratch, capacity: Self.messageScratchSize) {
                for copy in 0..<copies {
                    let a = copy * atomPortsPerCopy + controlSequence
                    appendEvent(
                        messageScratch, size: size, frame: 0, to: atomBuffers[a], capacity: Int(atomCapacities[a]))
                }
            }
        }
        if let events, midiPort >= 0 { copyEvents(from: events) }
        for copy in 0..<copies {
            let descriptor = descriptors[copy]
            let handle = handles[copy]
            for p in 0..<inputsPerCopy {
                let source = downmix ?? input + (copies == 1 ? p : copy) * channelStride
                connect(copy: copy, port: audioInputs[copy * inputsPerCopy + p], to: UnsafeMutableRawPointer(source))
            }
            for p in 0..<outputsPerCopy {
                let destination = output + (copies == 1 ? p : copy) * channelStride
                connect(
                    copy: copy, port: audioOutputs[copy * outputsPerCopy + p], to: UnsafeMutableRawPointer(destination))
            }
            workers?[copy].deliverResponses()
            // run() is the plugin's real-time entry point (plugins needing non-RT work use the worker, not run()).
            _unsafePerformance { descriptor.pointee.run(handle, UInt32(frames)) }
            workers?[copy].endRun()
        }
        if let reports, notifyPort >= 0 { report(from: UnsafeRawPointer(atomBuffers[notifyPort]), into: reports) }
        if copies == 1 && outputsPerCopy == 1 {
            var c = 1
            while c < channels {
                let copy = output + c * channelStride
                for f in 0..<frames { copy[f] = output[f] }
                c += 1
            }
        }
    }
}

extension LV2Kernel: RenderKernel {
    /// Inputs 1, 2, … of the step feed ports linked by name; extra outputs are the step's.
    @_noLocks
    public mutating func render(_ step: RenderStep, _ slice: RenderSlice) {
        process(
            input: step.inputs[0], output: step.output!, channelStride: slice.channelStride, channels: slice.channels,
            frames: slice.frames, guardOutput: slice.guardOutput,
            portInputs: step.inputCount > 1 ? step.inputs + 1 : nil,
            portOutputs: step.extraOutputs, time: slice.time)
    }
}
