/// What a node kind is and does, for the code that treats kinds alike (checks, plan building, surfaces).
public struct NodeTraits: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Makes sound without an input (a stream, a capture, an oscillator); its input bus 0 may stay unlinked.
    public static let isSource = NodeTraits(rawValue: 1 << 0)
    /// Takes MIDI events.
    public static let readsEvents = NodeTraits(rawValue: 1 << 1)
    /// Its output bus carries MIDI events, not audio.
    public static let sendsEvents = NodeTraits(rawValue: 1 << 2)
    /// Reads files (media, a MIDI file, an impulse response).
    public static let takesFiles = NodeTraits(rawValue: 1 << 3)
    /// Takes `preset`.
    public static let hasPresets = NodeTraits(rawValue: 1 << 4)
    /// Delays what passes through it (a plugin's reported latency).
    public static let hasLatency = NodeTraits(rawValue: 1 << 5)
    /// Takes `bypass`.
    public static let canBypass = NodeTraits(rawValue: 1 << 6)
    /// Where the graph's sound leaves (`output`).
    public static let isOutput = NodeTraits(rawValue: 1 << 7)
    /// Live sound from PipeWire enters here (`capture`, `sink`); offline, `render --input` feeds it.
    public static let isLiveInput = NodeTraits(rawValue: 1 << 8)
    /// Sums its inputs: any may stay unlinked, and parallel paths meeting here are aligned (latency compensation).
    public static let mixesInputs = NodeTraits(rawValue: 1 << 9)
    /// Takes `seek`.
    public static let canSeek = NodeTraits(rawValue: 1 << 10)
    /// Its presets are numbered too (`preset NODE 3`).
    public static let numberedPresets = NodeTraits(rawValue: 1 << 11)

    /// The traits' names, for printouts and the schema's descriptions.
    public static let names: [(NodeTraits, String)] = [
        (.isSource, "source"), (.readsEvents, "reads events"), (.sendsEvents, "sends events"),
        (.takesFiles, "takes files"),
        (.hasPresets, "presets"), (.hasLatency, "latency"), (.canBypass, "bypass"), (.isOutput, "output"),
        (.isLiveInput, "live input"), (.mixesInputs, "mixes inputs"), (.canSeek, "seek"),
        (.numberedPresets, "numbered presets"),
    ]

    public var names: [String] { Self.names.filter { contains($0.0) }.map(\.1) }
}
