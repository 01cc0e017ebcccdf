import Glibc

/// One factory preset of the iPod-style EQ: a name and ten slider gains in dB.
public struct IPodEQPreset: Sendable, Equatable {
    /// Position in the factory-preset table (Flat = 0).
    public let index: Int
    /// Display name, e.g. "Bass Booster".
    public let name: String
    /// Slider gains in dB for the ten bands of `bandCenters`.
    public let gains: [Double]

    /// Creates a preset entry.
    public init(index: Int, name: String, gains: [Double]) {
        self.index = index
        self.name = name
        self.gains = gains
    }

    /// Octave band centre frequencies in Hz.
    public static let bandCenters: [Double] = [32, 64, 125, 250, 500, 1000, 2000, 4000, 8000, 16000]

    /// The factory presets in table order, Flat = 0.
    public static let all: [IPodEQPreset] = {
        let table: [(String, [Double])] = [
            ("Flat", [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            ("Acoustic", [5, 5, 4, 1, 2, 1.5, 3.5, 4, 3.5, 2]),
            ("Bass Booster", [5.5, 4.5, 3.5, 2.5, 1.25, 0, 0, 0, 0, 0]),
            ("Bass Reducer", [-5.5, -4.5, -3.5, -2.5, -1.25, 0, 0, 0, 0, 0]),
            ("Classical", [4.5, 3.5, 3, 2.5, -1.5, -1.5, 0, 2, 3, 3.5]),
            ("Dance", [3.5, 6.5, 5, 0, 2, 3.5, 5, 4.5, 3.5, 0]),
            ("Deep", [5, 3.5, 1.5, 1, 3, 2.5, 1.5, -2, -3.5, -4.5]),
            ("Electronic", [4.5, 4, 1.5, 0, -2, 2, 1, 1.5, 4, 4.5]),
            ("Hip-Hop", [5, 4, 1.5, 3, -1, -1, 1.5, -0.5, 2, 3]),
            ("Jazz", [4, 3, 1.5, 2, -1.5, -1.5, 0, 1.5, 3, 3.5]),
            ("Latin", [4.5, 3, 0, 0, -1.5, -1.5, -1.5, 0, 3, 4.5]),
            ("Loudness", [6, 4, 0, 0, -2, 0, -1, -4.5, 5, 1]),
            ("Lounge", [-3, -1.5, -0.5, 1.5, 4, 2.5, 0, -1.5, 2, 1]),
            ("Piano", [3, 2, 0, 2.5, 3, 1.5, 3.5, 4.5, 3, 3.5]),
            ("Pop", [-1.5, -1, 0, 2, 4, 4, 2, 0, -1, -1.5]),
            ("R&B", [3, 7, 5.5, 1.5, -3, -1.5, 2, 2.5, 3, 3.5]),
            ("Rock", [5, 4, 3, 1.5, -0.5, -1, 0.5, 2.5, 3.5, 4.5]),
            ("Small Speakers", [5.5, 4.5, 3.5, 2.5, 1.25, 0, -1.25, -2.5, -3.5, -4.5]),
            ("Spoken Word", [-3.5, -0.5, 0, 0.5, 3.5, 4.5, 5, 4.5, 2.5, 0]),
            ("Treble Booster", [0, 0, 0, 0, 0, 1.25, 2.5, 3.5, 4.5, 5.5]),
            ("Treble Reducer", [0, 0, 0, 0, 0, -1.25, -2.5, -3.5, -4.5, -5.5]),
            ("Vocal Booster", [-1.5, -3, -3, 1.5, 3.5, 3.5, 3, 1.5, 0, -1.5]),
        ]
        return table.enumerated().map { IPodEQPreset(index: $0.offset, name: $0.element.0, gains: $0.element.1) }
    }()

    /// Finds a preset by case-insensitive name or by decimal index ("16" or "Rock" or "rock").
    /// Names also match with spaces, hyphens and other punctuation ignored ("hiphop", "bass_booster").
    public static func named(_ nameOrIndex: String) -> IPodEQPreset? {
        guard let first = nameOrIndex.firstIndex(where: { !$0.isWhitespace }),
            let last = nameOrIndex.lastIndex(where: { !$0.isWhitespace })
        else { return nil }
        let key = String(nameOrIndex[first...last])
        if key.allSatisfy({ $0.isASCII && $0.isNumber }) {
            guard let index = Int(key), all.indices.contains(index) else { return nil }
            return all[index]
        }
        let lowered = key.lowercased()
        if let exact = all.first(where: { $0.name.lowercased() == lowered }) { return exact }
        let compact = squeezed(lowered)
        if compact.isEmpty { return nil }
        return all.first { squeezed($0.name.lowercased()) == compact }
    }

    private static func squeezed(_ s: String) -> String {
        String(s.filter { $0.isLetter || $0.isNumber })
    }
}
