extension RunStatus {
    /// A node's loudness by EBU R128 while it is watched (`GraphSession.watch(.loudness, …)`); silence is -infinity
    /// (null in JSON). Integrated loudness, range and true peak count from when its loudness started being watched.
    public struct Loudness: Sendable, Equatable {
        public var node: String
        /// LUFS over the last 400 ms.
        public var momentary: Double
        /// LUFS over the last 3 s.
        public var shortTerm: Double
        /// Gated LUFS.
        public var integrated: Double
        /// Loudness range, LU.
        public var range: Double
        /// The largest true peak of any channel so far, dBTP.
        public var truePeak: Double

        public init(
            node: String, momentary: Double, shortTerm: Double, integrated: Double, range: Double, truePeak: Double
        ) {
            self.node = node
            self.momentary = momentary
            self.shortTerm = shortTerm
            self.integrated = integrated
            self.range = range
            self.truePeak = truePeak
        }

        /// What `meter` reads now.
        public init(node: String, _ meter: LoudnessMeter) {
            self.init(
                node: node, momentary: meter.momentary, shortTerm: meter.shortTerm, integrated: meter.integrated,
                range: meter.range, truePeak: meter.truePeak)
        }
    }
}

extension RunStatus.Loudness {
    public var json: JSONValue {
        .object([
            ("node", .string(node)), ("momentary", .level(momentary)), ("shortTerm", .level(shortTerm)),
            ("integrated", .level(integrated)), ("range", .level(range)), ("truePeak", .level(truePeak)),
        ])
    }

    /// `-23.0` or `-inf`: one decimal.
    static func text(_ value: Double) -> String { value.isFinite ? Format.printf("%.1f", value) : "-inf" }
}
