/// A stream of readings a client receives at a rate it chose: the socket's `subscribe meters 30`, OSC's
/// `/graphhost/meters`, the console's `top`. Each update is read through `LiveControl.read`.
public enum Feed: Hashable, Sendable, CustomStringConvertible {
    /// The levels of every meter that is on (outputs, and nodes metered with `"meter": true` or `meter NODE on`).
    case meters
    /// The EBU R128 loudness and true peak of every output (measured while someone subscribes).
    case loudness
    /// A node's spectrum in 1/6-octave bands (an output or a node with an audio output; measured while someone
    /// subscribes).
    case spectrum(node: String)
    /// The DSP load of the last second: per node and for the render call, beside PipeWire's figure.
    case load

    public var description: String {
        switch self {
        case .meters: return "meters"
        case .loudness: return "loudness"
        case .spectrum(let node): return "spectrum \(node)"
        case .load: return "load"
        }
    }

    /// The feeds a subscription can name, for errors and help.
    public static let names = ["meters", "loudness", "spectrum NODE", "load"]
}
