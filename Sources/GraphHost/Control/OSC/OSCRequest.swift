import FoundationEssentials
import Glibc

/// What an OSC message asks of graphhost: one command for `LiveControl.perform`, or a change of who receives events.
public enum OSCRequest: Equatable, Sendable {
    case control(Command)
    case subscribe(OSCReturnAddress)
    case unsubscribe(OSCReturnAddress)
    /// Sends subscribers every meter's levels as `/graphhost/meter` this many times a second (0: no more).
    case meters(rate: Double)

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
        ("meters", "RATE: updates a second to subscribers, 0 (off) or 1…60: type tag i, f or d"),
    ]

    /// The request an OSC message makes; throws an error that names the address and what it expects.
    public static func parse(_ message: OSCMessage) throws(OSCError) -> OSCRequest {
        guard message.address.hasPrefix(prefix),
            let form = forms.first(where: { prefix + $0.address == message.address })
        else {
            throw .unknownAddress(message.address, known: forms.map { prefix + $0.address })
        }
        func wrong() -> OSCError {
            .wrongArguments(address: message.address, expects: form.expects, typeTags: message.typeTags)
        }
        func word(_ argument: OSCArgument, _ what: String) throws(OSCError) -> String {
            guard case .string(let text) = argument else { throw wrong() }
            guard !text.isEmpty, !text.contains(where: { $0.isWhitespace || $0.isNewline }),
                !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                throw .invalid(
                    "\(message.address): \(what) '\(text)' must be one word without spaces or control characters")
            }
            return text
        }
        func text(_ argument: OSCArgument, _ what: String) throws(OSCError) -> String {
            guard case .string(let text) = argument else { throw wrong() }
            let trimmed = text.trimmingSpaces()
            guard !trimmed.isEmpty, !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                throw .invalid(
                    "\(message.address): \(what) '\(text)' must be non-empty text without control characters")
            }
            return trimmed
        }
        /// A finite number (a float as its shortest decimal: 0.1, not 0.10000000149).
        func number(_ argument: OSCArgument, _ what: String) throws(OSCError) -> Double {
            let value: Double
            switch argument {
            case .int(let n): value = Double(n)
            case .float(let n): value = Double(String(describing: n)) ?? Double(n)
            case .double(let n): value = n
            default: throw wrong()
            }
            guard value.isFinite else { throw .invalid("\(message.address): \(what) \(value) is not a finite number") }
            return value
        }
        /// A swap mode after a chain or a path.
        func mode(_ argument: OSCArgument?) throws(OSCError) -> SwapMode? {
            guard let argument else { return nil }
            guard case .string(let name) = argument else { throw wrong() }
            guard let mode = SwapMode(rawValue: name) else {
                throw .invalid("\(message.address): MODE '\(name)' is not \(SwapMode.names)")
            }
            return mode
        }
        func node(_ node: String, _ action: NodeCommand) -> OSCRequest {
            .control(.node(NodeRequest(node: node, action: action)))
        }
        let arguments = message.arguments
        switch (form.address, arguments.count) {
        case ("set", 3):
            let id = try word(arguments[0], "NODE")
            let parameter = ParameterID(try word(arguments[1], "PARAM"))
            switch arguments[2] {
            case .bool(let on): return node(id, .choose(parameter: parameter, label: on ? "on" : "off"))
            case .string: return node(id, .choose(parameter: parameter, label: try text(arguments[2], "VALUE")))
            default: return node(id, .set(parameter: parameter, value: try number(arguments[2], "VALUE")))
            }
        case ("preset", 2):
            let id = try word(arguments[0], "NODE")
            if case .int(let index) = arguments[1] { return node(id, .preset(String(index))) }
            return node(id, .preset(try text(arguments[1], "NAME")))
        case ("chain", 2), ("chain", 3):
            return .control(
                .chain(
                    node: try word(arguments[0], "NODE"), name: try word(arguments[1], "NAME"),
                    swap: try mode(arguments.dropFirst(2).first)))
        case ("bypass", 2):
            let id = try word(arguments[0], "NODE")
            switch arguments[1] {
            case .bool(let on): return node(id, .bypass(on))
            case .int(let flag) where flag == 0 || flag == 1: return node(id, .bypass(flag == 1))
            case .string(let flag) where flag == "on" || flag == "off": return node(id, .bypass(flag == "on"))
            default: throw wrong()
            }
        case ("seek", 2):
            return node(try word(arguments[0], "NODE"), .seek(try number(arguments[1], "SECONDS")))
        case ("load", 1), ("load", 2):
            return .control(.load(path: try text(arguments[0], "PATH"), swap: try mode(arguments.dropFirst(1).first)))
        case ("tempo", 1):
            let bpm = try number(arguments[0], "BPM")
            guard (1...999).contains(bpm) else {
                throw .invalid("\(message.address): BPM \(Format.number(bpm)) is not 1…999")
            }
            return .control(.tempo(bpm))
        case ("status", 0): return .control(.status)
        case ("list", 0): return .control(.list)
        case ("pause", 0): return .control(.pause)
        case ("play", 0): return .control(.play)
        case ("meters", 1):
            let rate = try number(arguments[0], "RATE")
            guard rate == 0 || Subscription.rates.contains(rate) else {
                throw .invalid("\(message.address): RATE \(Format.number(rate)) is not 0 or 1…60")
            }
            return .meters(rate: rate)
        case ("subscribe", _), ("unsubscribe", _):
            let target: OSCReturnAddress
            switch arguments.first {
            case nil where arguments.isEmpty: target = .sender
            case .int(let port) where arguments.count == 1:
                guard (1...65535).contains(port) else {
                    throw .invalid("\(message.address): port \(port) is not 1…65535")
                }
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
