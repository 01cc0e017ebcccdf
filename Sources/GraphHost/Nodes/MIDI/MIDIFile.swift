import FoundationEssentials
import Glibc

/// The channel messages of a Standard MIDI File (format 0 or 1, tempo changes followed), with their times in seconds.
/// Written here rather than taken from a library: Debian's libsmf is unmaintained since 2010 and pulls in GLib, and
/// reading the format is a page of code.
struct MIDIFile {
    struct Event {
        var seconds: Double
        var bytes: [UInt8]
    }
    var events: [Event]
    /// The time of the last event.
    var duration: Double { events.last?.seconds ?? 0 }

    init(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw MIDIFileError(
                "cannot read the MIDI file '\(path)' "
                    + "(\(FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file"))"
            )
        }
        try self.init(bytes: [UInt8](data), name: path)
    }

    init(bytes: [UInt8], name: String) throws {
        var reader = Reader(bytes: bytes, name: name)
        guard try reader.tag() == "MThd", try reader.uint32() == 6 else {
            throw reader.error("not a Standard MIDI File (no MThd header)")
        }
        let format = try reader.uint16()
        let tracks = try reader.uint16()
        let division = try reader.uint16()
        guard format <= 1 else { throw reader.error("MIDI file format \(format) is not supported (0 and 1 are)") }
        guard division & 0x8000 == 0, division > 0 else { throw reader.error("SMPTE time division is not supported") }
        var timed: [(tick: Int, order: Int, bytes: [UInt8])] = []
        var tempos: [(tick: Int, microsPerQuarter: Int)] = [(0, 500_000)]
        for _ in 0..<tracks {
            guard try reader.tag() == "MTrk" else { throw reader.error("expected a track (MTrk)") }
            let end = reader.offset + Int(try reader.uint32())
            var tick = 0
            var status: UInt8 = 0
            while reader.offset < end {
                tick += try reader.variableLength()
                var first = try reader.byte()
                if first < 0x80 {
                    guard status != 0 else { throw reader.error("running status without a status byte") }
                    reader.offset -= 1
                    first = status
                }
                switch first {
                case 0xFF:
                    let type = try reader.byte()
                    let length = try reader.variableLength()
                    let body = try reader.take(length)
                    if type == 0x51 && length == 3 {
                        tempos.append((tick, Int(body[0]) << 16 | Int(body[1]) << 8 | Int(body[2])))
                    }
                case 0xF0, 0xF7:
                    _ = try reader.take(try reader.variableLength())
                default:
                    status = first
                    let length = (first & 0xF0 == 0xC0 || first & 0xF0 == 0xD0) ? 1 : 2
                    timed.append((tick, timed.count, [first] + (try reader.take(length))))
                }
            }
            reader.offset = end
        }
        tempos.sort { $0.tick < $1.tick }
        timed.sort { ($0.tick, $0.order) < ($1.tick, $1.order) }
        func seconds(_ tick: Int) -> Double {
            var time = 0.0
            var lastTick = 0
            var micros = 500_000
            for tempo in tempos where tempo.tick <= tick {
                time += Double(tempo.tick - lastTick) * Double(micros) / 1e6 / Double(division)
                (lastTick, micros) = (tempo.tick, tempo.microsPerQuarter)
            }
            return time + Double(tick - lastTick) * Double(micros) / 1e6 / Double(division)
        }
        events = timed.map { Event(seconds: seconds($0.tick), bytes: $0.bytes) }
    }

    /// Big-endian reading with errors that name the file and the offset.
    struct Reader {
        let bytes: [UInt8]
        let name: String
        var offset = 0

        func error(_ why: String) -> MIDIFileError { MIDIFileError("MIDI file '\(name)' at byte \(offset): \(why)") }

        mutating func byte() throws -> UInt8 {
            guard offset < bytes.count else { throw error("ends early") }
            defer { offset += 1 }
            return bytes[offset]
        }
        mutating func take(_ count: Int) throws -> [UInt8] {
            guard count >= 0, offset + count <= bytes.count else { throw error("ends early") }
            defer { offset += count }
            return Array(bytes[offset..<(offset + count)])
        }
        mutating func uint16() throws -> Int {
            let b = try take(2)
            return Int(b[0]) << 8 | Int(b[1])
        }
        mutating func uint32() throws -> UInt32 {
            let b = try take(4)
            return b.reduce(0) { $0 << 8 | UInt32($1) }
        }
        mutating func tag() throws -> String { String(decoding: try take(4), as: UTF8.self) }
        mutating func variableLength() throws -> Int {
            var value = 0
            for _ in 0..<4 {
                let b = try byte()
                value = value << 7 | Int(b & 0x7F)
                if b & 0x80 == 0 { return value }
            }
            throw error("a variable-length number longer than 4 bytes")
        }
    }
}

/// A MIDI file that cannot be read, with the file, the byte and what is wrong.
struct MIDIFileError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
