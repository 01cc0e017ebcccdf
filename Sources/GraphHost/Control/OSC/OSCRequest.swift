import FoundationEssentials
import Glibc

/// What an OSC message asks of graphhost: one control line for `LiveControl.handle`, or a change of who receives
/// events.
public enum OSCRequest: Equatable, Sendable {
    case control(String)
    case subscribe(OSCReturnAddress)
    case unsubscribe(OSCReturnAddress)

    /// Where a subscription sends: the sender itself, another port of the sender's host, or an `osc.udp://` URL.
    public enum OSCReturnAddress: Equatable, Sendable {
        case sender
        case port(Int)
        case url(String)
    }

    public static let prefix = "/graphhost/"

    /// The addresses and what each expects, for errors.
    public static let forms: [(address: String, expects: String)] = [
        ("set", "NODE PARAM VALUE: type tags ss then f, i, d, h, s (a label), T or F"),
        ("preset", "NODE NAME|INDEX: type tags ss or si"),
        ("chain", "NODE NAME [MODE]: type tags ss or sss (MODE: \(SwapMode.names))"),
        ("bypass", "NODE on|off: type tags sT, sF, si (1 or 0) or ss (on or off)"),
        ("seek", "NODE SECONDS: type tags sf, sd or si"),
        ("load", "PATH [MODE]: type tags s or ss (MODE: \(SwapMode.names))"),
        ("tempo", "BPM: type tag f, d or i"),
        ("status", "no arguments"), ("list", "no arguments"), ("pause", "no arguments"), ("play", "no arguments"),
        ("subscribe", "no arguments, a PORT (i) or an osc.udp:// URL (s)"),
        ("unsubscribe", "no arguments, a PORT (i) or an osc.udp:// URL (s)"),
    ]

    /// The request an OSC message makes; throws an error that names the address and what it expects.
    public static func parse(_ message: OSCMessage) throws -> OSCRequest {
        let known = forms.map { prefix + $0.address }.joined(separator: ", ")
        guard message.address.hasPrefix(prefix),
              let form = forms.first(where: { prefix + $0.address == message.address }) else {
            throw CommandError("unknown OSC address '\(message.address)'; addresses: \(known)")
        }
        func wrong() -> CommandError {
            CommandError("\(message.address) expects \(form.expects); got type tags '\(message.typeTags)'")
        }
        func word(_ argument: OSCArgument, _ what: String) throws -> String {
            guard case .string(let text) = argument else { throw wrong() }
            guard !text.isEmpty, !text.contains(where: { $0.isWhitespace || $0.isNewline }), !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw CommandError("\(message.address): \(what) '\(text)' must be one word without spaces or control characters")
            }
            return text
        }
        func text(_ argument: OSCArgument, _ what: String) throws -> String {
            guard case .string(let text) = argument else { throw wrong() }
            let trimmed = text.trimmingSpaces()
            guard !trimmed.isEmpty, !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw CommandError("\(message.address): \(what) '\(text)' must be non-empty text without control characters")
            }
            return trimmed
        }
        func number(_ argument: OSCArgument) -> String? {
            switch argument {
            case .int(let value): return String(value)
            case .float(let value): return String(describing: value)
            case .double(let value): return String(describing: value)
            default: return nil
            }
        }
        /// A swap mode after a chain or a path, as the control line's last word.
        func mode(_ argument: OSCArgument?) throws -> String {
            guard let argument else { return "" }
            guard case .string(let name) = argument else { throw wrong() }
            guard SwapMode(rawValue: name) != nil else { throw CommandError("\(message.address): MODE '\(name)' is not \(SwapMode.names)") }
            return " " + name
        }
        let arguments = message.arguments
        switch (form.address, arguments.count) {
        case ("set", 3):
            let node = try word(arguments[0], "NODE"), parameter = try word(arguments[1], "PARAM")
            let value: String
            switch arguments[2] {
            case .bool(let on): value = on ? "on" : "off"
            case .string: value = try text(arguments[2], "VALUE")
            default:
                guard let n = number(arguments[2]) else { throw wrong() }
                value = n
            }
            return .control("set \(node) \(parameter) \(value)")
        case ("preset", 2):
            let node = try word(arguments[0], "NODE")
            if case .int(let index) = arguments[1] { return .control("preset \(node) \(index)") }
            return .control("preset \(node) \(try text(arguments[1], "NAME"))")
        case ("chain", 2), ("chain", 3):
            return .control("chain \(try word(arguments[0], "NODE")) \(try word(arguments[1], "NAME"))" + (try mode(arguments.dropFirst(2).first)))
        case ("bypass", 2):
            let node = try word(arguments[0], "NODE")
            switch arguments[1] {
            case .bool(let on): return .control("bypass \(node) \(on ? "on" : "off")")
            case .int(let flag) where flag == 0 || flag == 1: return .control("bypass \(node) \(flag == 1 ? "on" : "off")")
            case .string(let flag) where flag == "on" || flag == "off": return .control("bypass \(node) \(flag)")
            default: throw wrong()
            }
        case ("seek", 2):
            let node = try word(arguments[0], "NODE")
            guard case .string = arguments[1] else {
                guard let seconds = number(arguments[1]) else { throw wrong() }
                return .control("seek \(node) \(seconds)")
            }
            throw wrong()
        case ("load", 1), ("load", 2):
            return .control("load \(try text(arguments[0], "PATH"))" + (try mode(arguments.dropFirst(1).first)))
        case ("tempo", 1):
            guard case .string = arguments[0] else {
                guard let bpm = number(arguments[0]) else { throw wrong() }
                return .control("tempo \(bpm)")
            }
            throw wrong()
        case ("status", 0), ("list", 0), ("pause", 0), ("play", 0):
            return .control(form.address)
        case ("subscribe", _), ("unsubscribe", _):
            let target: OSCReturnAddress
            switch arguments.first {
            case nil where arguments.isEmpty: target = .sender
            case .int(let port) where arguments.count == 1:
                guard (1...65535).contains(port) else { throw CommandError("\(message.address): port \(port) is not 1…65535") }
                target = .port(Int(port))
            case .string(let url) where arguments.count == 1: target = .url(url)
            default: throw wrong()
            }
            return form.address == "subscribe" ? .subscribe(target) : .unsubscribe(target)
        default:
            throw wrong()
        }
    }
}
