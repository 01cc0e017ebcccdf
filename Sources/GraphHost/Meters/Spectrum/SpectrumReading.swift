extension RunStatus {
    /// A node's spectrum in 1/6-octave bands (`SpectrumAnalyzer`).
    public struct Spectrum: Sendable, Equatable {
        public var node: String
        public var bands: [SpectrumBand]

        public init(node: String, bands: [SpectrumBand]) {
            self.node = node
            self.bands = bands
        }
    }

    /// One band: its center, Hz, and its level, dB relative to a full-scale sine (silence is -infinity: null in JSON).
    public struct SpectrumBand: Sendable, Equatable {
        public var center: Double
        public var level: Double

        public init(center: Double, level: Double) {
            self.center = center
            self.level = level
        }
    }
}

extension RunStatus.Spectrum {
    public var json: JSONValue {
        .object([
            ("node", .string(node)),
            ("bands", .array(bands.map(\.json))),
        ])
    }
}

extension RunStatus.SpectrumBand {
    public var json: JSONValue {
        .object([("center", .number(center)), ("level", .level(level))])
    }
}
