import FoundationEssentials
import Glibc

/// A parametric EQ in Equalizer APO's configuration format, which AutoEQ's `ParametricEQ.txt` headphone corrections
/// also use: `Preamp: -6.2 dB` (several add up) and `Filter N: ON PK Fc 1000 Hz Gain -3.5 dB Q 1.41` lines. Filter
/// types: `PK` (peaking), `LSC`/`HSC` (low and high shelf, Fc the cookbook's shelf frequency; a slope in dB per octave
/// may follow the type, `LSC 12 dB`, in place of Q), `LP`/`LPQ`, `HP`/`HPQ`, `BP`, `NO` (notch). A filter switched
/// `OFF`, blank lines and comments (`#`) are skipped; any other line, or a value outside what a `peq` band takes, is a
/// problem naming its line number and what was wrong, never the line's text (the file may be anything a client named).
public struct EqualizerAPOFile: Equatable, Sendable {
    public var preamp: Double
    public var bands: [ParametricBand]
    /// The line number (from 1) of each band's filter.
    public var bandLines: [Int]

    /// What is wrong with one line.
    public struct Problem: Equatable, Sendable, CustomStringConvertible {
        public var line: Int
        public var message: String
        /// Line 0 is the file as a whole.
        public var description: String { line > 0 ? "line \(line): \(message)" : message }
    }

    /// Why a file could not be read: every problem, in line order (the description shows the first
    /// `shownProblems`).
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public var file: String
        public var problems: [Problem]
        public static let shownProblems = 5
        public var description: String {
            guard !problems.isEmpty else { return file }
            let shown = problems.prefix(Self.shownProblems).map { "\(file) \($0)" }.joined(separator: "; ")
            let more = problems.count - Self.shownProblems
            return more > 0 ? shown + "; and \(more) more lines" : shown
        }
    }

    /// The largest file read: a configuration is a few kilobytes.
    public static let maxBytes = 1 << 20

    /// Reads the file at `path` (`Failure` names it and each bad line).
    public static func load(_ path: String) throws(Failure) -> EqualizerAPOFile {
        var info = stat()
        if stat(path, &info) == 0, info.st_size > maxBytes {
            throw Failure(
                file: path,
                problems: [Problem(line: 0, message: "is larger than \(maxBytes >> 20) MiB: not an EQ file")])
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(file: path, problems: [Problem(line: 0, message: "cannot be read")])
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw Failure(file: path, problems: [Problem(line: 0, message: "is not UTF-8 text")])
        }
        do {
            return try parse(text)
        } catch {
            throw Failure(file: path, problems: error.problems)
        }
    }

    /// Reads the text of a configuration.
    public static func parse(_ text: String) throws(Failure) -> EqualizerAPOFile {
        var file = EqualizerAPOFile(preamp: 0, bands: [], bandLines: [])
        var problems: [Problem] = []
        // A UTF-8 byte order mark, as Windows editors write, is not part of the first line.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for (k, raw) in lines.enumerated() {
            var line = trimmed(raw)
            if k == 0, line.hasPrefix("\u{FEFF}") { line = line.dropFirst() }
            if line.isEmpty || line.hasPrefix("#") { continue }
            do {
                try file.read(line)
                if file.bands.count > file.bandLines.count { file.bandLines.append(k + 1) }
            } catch {
                problems.append(Problem(line: k + 1, message: error.message))
            }
        }
        if file.bands.count > PEQParameter.maxBands {
            problems.append(
                Problem(
                    line: file.bandLines[PEQParameter.maxBands],
                    message: "\(file.bands.count) filters are on; a peq node has at most \(PEQParameter.maxBands)"))
        }
        guard problems.isEmpty else { throw Failure(file: "", problems: problems) }
        return file
    }

    struct LineError: Error {
        var message: String
    }

    /// The filter types and the band shapes they make.
    static let types: [String: ParametricBand.Shape] = [
        "PK": .peaking, "LSC": .lowShelf, "HSC": .highShelf, "LP": .lowPass, "LPQ": .lowPass, "HP": .highPass,
        "HPQ": .highPass, "BP": .bandPass, "NO": .notch,
    ]

    mutating func read(_ line: Substring) throws(LineError) {
        guard let colon = line.firstIndex(of: ":") else {
            throw LineError(message: "is not a command ('Preamp:' or 'Filter:')")
        }
        let command = Self.trimmed(line[..<colon]).lowercased()
        var words = line[line.index(after: colon)...].split(whereSeparator: \.isWhitespace).map(String.init)
        if command == "preamp" {
            preamp += try Self.number(&words, named: "the preamp", unit: "dB")
            guard words.isEmpty else { throw LineError(message: "the preamp is followed by more than its unit") }
        } else if command.hasPrefix("filter"), Self.trimmed(command.dropFirst(6)).allSatisfy(\.isNumber) {
            if let band = try Self.filter(words) { bands.append(band) }
        } else {
            throw LineError(message: "is a command that is not supported (only 'Preamp:' and 'Filter:' lines are)")
        }
    }

    /// The band a `Filter:` line's words describe, or nil for a filter switched off.
    static func filter(_ given: [String]) throws(LineError) -> ParametricBand? {
        var words = given
        guard let state = words.first?.uppercased(), state == "ON" || state == "OFF" else {
            throw LineError(message: "a filter starts with ON or OFF")
        }
        words.removeFirst()
        guard let typeName = words.first?.uppercased() else { throw LineError(message: "the filter has no type") }
        guard let shape = types[typeName] else {
            throw LineError(
                message: "the filter's type is not supported; types: "
                    + types.keys.sorted().joined(separator: ", "))
        }
        words.removeFirst()
        var slope: Double?
        if shape == .lowShelf || shape == .highShelf, let first = words.first, Double(first) != nil {
            slope = try number(&words, named: "the slope", unit: "dB")
        }
        var frequency: Double?
        var gain: Double?
        var q: Double?
        while let key = words.first {
            words.removeFirst()
            switch key.lowercased() {
            case "fc": frequency = try number(&words, named: "Fc", unit: "Hz", kilo: true)
            case "gain": gain = try number(&words, named: "Gain", unit: "dB")
            case "q": q = try number(&words, named: "Q", unit: nil)
            default: throw LineError(message: "a filter takes only Fc, Gain and Q (and a shelf's slope)")
            }
        }
        if state == "OFF" { return nil }
        guard let frequency else { throw LineError(message: "the filter has no Fc") }
        if shape.hasGain, gain == nil { throw LineError(message: "a \(typeName) filter needs a Gain") }
        if slope != nil, q != nil { throw LineError(message: "give a shelf's slope or its Q, not both") }
        if let slope {
            q = try shelfQ(slope: slope, gain: gain ?? 0)
        } else if q == nil, shape == .peaking || shape == .bandPass || shape == .notch {
            throw LineError(message: "a \(typeName) filter needs a Q")
        }
        let band = ParametricBand(
            shape: shape, frequency: frequency, gain: gain ?? PEQParameter.defaultGain, q: q ?? PEQParameter.defaultQ)
        for field in [PEQParameter.Field.frequency, .gain, .q] {
            let value = band.value(of: field)
            guard field.range.contains(value) else {
                throw LineError(
                    message: "\(field == .frequency ? "Fc" : field == .gain ? "Gain" : "Q") \(Format.number(value))"
                        + (field.unit.isEmpty ? "" : " \(field.unit)") + " is outside "
                        + "\(Format.number(field.range.lowerBound))…\(Format.number(field.range.upperBound))")
            }
        }
        return band
    }

    /// The cookbook Q of a shelf of `gain` dB whose slope is `slope` dB per octave (12 dB per octave is the
    /// cookbook's steepest monotonic shelf, S = 1).
    static func shelfQ(slope: Double, gain: Double) throws(LineError) -> Double {
        let s = slope / 12
        guard s > 0, s <= 1 else {
            throw LineError(message: "a shelf's slope must be above 0 and at most 12 dB per octave")
        }
        let a = pow(10, gain / 40)
        return 1 / ((a + 1 / a) * (1 / s - 1) + 2).squareRoot()
    }

    /// `text` without the white space (and carriage returns) around it.
    static func trimmed(_ text: Substring) -> Substring {
        guard let first = text.firstIndex(where: { !$0.isWhitespace }),
            let last = text.lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return text[first...last]
    }

    /// Takes a number and its optional unit (`Hz` or `kHz` where `kilo`) from the front of `words`.
    static func number(_ words: inout [String], named name: String, unit: String?, kilo: Bool = false)
        throws(LineError) -> Double
    {
        guard let word = words.first else { throw LineError(message: "\(name) has no value") }
        guard let value = Double(word), value.isFinite else {
            throw LineError(message: "\(name) is not a number")
        }
        words.removeFirst()
        guard let unit, let next = words.first else { return value }
        if next.lowercased() == unit.lowercased() {
            words.removeFirst()
        } else if kilo, next.lowercased() == "k" + unit.lowercased() {
            words.removeFirst()
            return value * 1000
        }
        return value
    }
}
