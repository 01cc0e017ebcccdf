/// Why an OSC message was not carried out: a datagram that is not an OSC message, an address graphhost does not
/// know, arguments of the wrong types, or a subscription it cannot make.
public enum OSCError: Error, CustomStringConvertible, Sendable {
    case unknownAddress(String, known: [String])
    /// The address, what it expects and the type tags it got.
    case wrongArguments(address: String, expects: String, typeTags: String)
    case notAMessage(liblo: Int32)
    case bundle
    /// An argument or subscription that cannot be used, in words.
    case invalid(String)

    public var description: String {
        switch self {
        case .unknownAddress(let address, let known):
            return "unknown OSC address '\(address)'; addresses: \(known.joined(separator: ", "))"
        case .wrongArguments(let address, let expects, let tags):
            return "\(address) expects \(expects); got type tags '\(tags)'"
        case .notAMessage(let result): return "not an OSC message (liblo error \(result))"
        case .bundle: return "OSC bundles are not supported; send each message on its own"
        case .invalid(let message): return message
        }
    }
}
