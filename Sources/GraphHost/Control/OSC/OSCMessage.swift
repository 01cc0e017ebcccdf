import CLo
import FoundationEssentials
import Glibc

/// One argument of an OSC message, as graphhost reads it.
public enum OSCArgument: Equatable, Sendable {
    /// `i` (32-bit) or `h` (64-bit).
    case int(Int64)
    /// `f`.
    case float(Float)
    /// `d`.
    case double(Double)
    /// `s` or `S` (symbol).
    case string(String)
    /// `T` or `F`.
    case bool(Bool)
    /// Any other type (blob, MIDI, time tag, ...), kept by its tag for error messages.
    case other(Character)

    public var typeTag: Character {
        switch self {
        case .int(let value): return Int32(exactly: value) == nil ? "h" : "i"
        case .float: return "f"
        case .double: return "d"
        case .string: return "s"
        case .bool(let value): return value ? "T" : "F"
        case .other(let tag): return tag
        }
    }
}

/// An OSC message: an address pattern and its arguments, read from and written to a datagram with liblo.
public struct OSCMessage: Equatable, Sendable {
    public var address: String
    public var arguments: [OSCArgument]

    public init(address: String, arguments: [OSCArgument] = []) {
        self.address = address
        self.arguments = arguments
    }

    /// The arguments' type tags, e.g. `ssf`.
    public var typeTags: String { String(arguments.map(\.typeTag)) }

    /// Reads one datagram; throws for a bundle or anything that is not a well-formed OSC message.
    public init(datagram: [UInt8]) throws {
        if datagram.starts(with: Array("#bundle".utf8)) {
            throw OSCError.bundle
        }
        var bytes = datagram
        var result: Int32 = 0
        let decoded = bytes.withUnsafeMutableBytes { raw -> (String, lo_message)? in
            guard let base = raw.baseAddress, let path = lo_get_path(base, raw.count),
                let message = lo_message_deserialise(base, raw.count, &result)
            else { return nil }
            return (String(cString: path), message)
        }
        guard let (address, message) = decoded else {
            throw OSCError.notAMessage(liblo: result)
        }
        defer { lo_message_free(message) }
        let count = Int(lo_message_get_argc(message))
        let types = lo_message_get_types(message).map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
        let values = lo_message_get_argv(message)
        self.address = address
        arguments = (0..<count).map { i in
            let tag = UInt8(bitPattern: types[i])
            if tag == UInt8(ascii: "T") || tag == UInt8(ascii: "F") { return .bool(tag == UInt8(ascii: "T")) }
            guard let value = values?[i].map(UnsafeRawPointer.init) else {
                return .other(Character(UnicodeScalar(tag)))
            }
            // Each argument is read at its own size: a 4-byte one may end the datagram, where the whole lo_arg
            // union would reach past it.
            switch tag {
            case UInt8(ascii: "i"): return .int(Int64(value.loadUnaligned(as: Int32.self)))
            case UInt8(ascii: "h"): return .int(value.loadUnaligned(as: Int64.self))
            case UInt8(ascii: "f"): return .float(value.loadUnaligned(as: Float.self))
            case UInt8(ascii: "d"): return .double(value.loadUnaligned(as: Double.self))
            case UInt8(ascii: "s"), UInt8(ascii: "S"):
                return .string(String(cString: value.assumingMemoryBound(to: CChar.self)))
            default: return .other(Character(UnicodeScalar(tag)))
            }
        }
    }

    /// The message as a datagram.
    public func encoded() -> [UInt8] {
        guard let message = lo_message_new() else { return [] }
        defer { lo_message_free(message) }
        for argument in arguments {
            switch argument {
            case .int(let value):
                if let small = Int32(exactly: value) {
                    lo_message_add_int32(message, small)
                } else {
                    lo_message_add_int64(message, value)
                }
            case .float(let value): lo_message_add_float(message, value)
            case .double(let value): lo_message_add_double(message, value)
            case .string(let value): lo_message_add_string(message, value)
            case .bool(let value): if value { lo_message_add_true(message) } else { lo_message_add_false(message) }
            case .other: lo_message_add_nil(message)
            }
        }
        var size = 0
        guard let data = lo_message_serialise(message, address, nil, &size) else { return [] }
        defer { free(data) }
        return Array(UnsafeRawBufferPointer(start: data, count: size))
    }
}
