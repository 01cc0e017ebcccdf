import CLADSPAGlue
import FoundationEssentials
import Glibc

/// One LADSPA plugin as graphhost sees it: where it comes from (its library and index there), its unique id, label
/// and names, and its ports read from the port hints as the LV2 host reads LV2 ports (bounds, logarithmic, toggled,
/// integer, sample rate, the default the hints name). The library stays open for the process. Control world.
public struct LADSPAPlugin: @unchecked Sendable {
    public var library: String
    public var uniqueID: Int
    public var label: String
    public var name: String
    public var maker: String
    public var ports: [LV2Port]
    /// The plugin's LADSPA descriptor in its open library.
    let ladspa: UnsafePointer<LADSPA_Descriptor>

    init(library: String, descriptor: UnsafePointer<LADSPA_Descriptor>) {
        self.library = library
        ladspa = descriptor
        let d = descriptor.pointee
        uniqueID = Int(d.UniqueID)
        label = d.Label.map { String(cString: $0) } ?? ""
        name = d.Name.map { String(cString: $0) } ?? label
        maker = d.Maker.map { String(cString: $0) } ?? ""
        var symbols: Set<String> = []
        ports = (0..<Int(d.PortCount)).map { index in
            let kind = d.PortDescriptors[index]
            let portName = d.PortNames[index].map { String(cString: $0) } ?? "port \(index)"
            var symbol = Self.symbol(portName)
            while symbols.contains(symbol) { symbol += "_" }
            symbols.insert(symbol)
            var port = LV2Port(
                index: index, symbol: symbol, name: portName,
                kind: kind & Int32(LADSPA_PORT_AUDIO) != 0 ? .audio : .control,
                isInput: kind & Int32(LADSPA_PORT_INPUT) != 0, isSideChain: false, isOptional: false,
                isInteger: false, reportsLatency: false, minimumSize: 0)
            Self.read(d.PortRangeHints[index], into: &port)
            return port
        }
    }

    /// A port name as a symbol: lower case, letters, digits and underscores ("Amps gain (dB)" → "amps_gain_db").
    static func symbol(_ name: String) -> String {
        var symbol = ""
        for c in name.lowercased() {
            if c.isASCII && (c.isLetter || c.isNumber) {
                symbol.append(c)
            } else if !symbol.isEmpty && symbol.last != "_" {
                symbol.append("_")
            }
        }
        while symbol.last == "_" { symbol.removeLast() }
        return symbol.isEmpty || symbol.first!.isNumber ? "p" + symbol : symbol
    }

    /// The hints of a control port: its bounds (fractions of the sample rate under LADSPA_HINT_SAMPLE_RATE), toggled,
    /// integer, logarithmic, and the default the hint names (LADSPA 1.1).
    static func read(_ hint: LADSPA_PortRangeHint, into port: inout LV2Port) {
        let h = hint.HintDescriptor
        func has(_ flag: Int32) -> Bool { h & flag != 0 }
        let lo: Float? = has(Int32(LADSPA_HINT_BOUNDED_BELOW)) ? hint.LowerBound : nil
        let hi: Float? = has(Int32(LADSPA_HINT_BOUNDED_ABOVE)) ? hint.UpperBound : nil
        port.minimum = lo
        port.maximum = hi
        port.isToggled = has(Int32(LADSPA_HINT_TOGGLED))
        port.isInteger = has(Int32(LADSPA_HINT_INTEGER))
        port.isLogarithmic = has(Int32(LADSPA_HINT_LOGARITHMIC)) && (lo ?? 0) > 0
        port.boundsInSampleRates = has(Int32(LADSPA_HINT_SAMPLE_RATE))
        if port.isToggled {
            port.minimum = 0
            port.maximum = 1
        }
        /// Between the bounds, by `weight`, on a log scale where the port is logarithmic.
        func between(_ weight: Float) -> Float? {
            guard let lo, let hi else { return nil }
            if port.isLogarithmic && lo > 0 && hi > 0 { return exp(log(lo) * (1 - weight) + log(hi) * weight) }
            return lo * (1 - weight) + hi * weight
        }
        switch h & Int32(LADSPA_HINT_DEFAULT_MASK) {
        case Int32(LADSPA_HINT_DEFAULT_MINIMUM): port.defaultValue = lo
        case Int32(LADSPA_HINT_DEFAULT_LOW): port.defaultValue = between(0.25)
        case Int32(LADSPA_HINT_DEFAULT_MIDDLE): port.defaultValue = between(0.5)
        case Int32(LADSPA_HINT_DEFAULT_HIGH): port.defaultValue = between(0.75)
        case Int32(LADSPA_HINT_DEFAULT_MAXIMUM): port.defaultValue = hi
        case Int32(LADSPA_HINT_DEFAULT_0): port.defaultValue = 0
        case Int32(LADSPA_HINT_DEFAULT_1): port.defaultValue = 1
        case Int32(LADSPA_HINT_DEFAULT_100): port.defaultValue = 100
        case Int32(LADSPA_HINT_DEFAULT_440): port.defaultValue = 440
        default: port.defaultValue = nil
        }
        if port.isInteger, let d = port.defaultValue { port.defaultValue = d.rounded() }
    }

    /// Input control ports.
    public var controlInputs: [LV2Port] { ports.filter { $0.kind == .control && $0.isInput } }

    public func audioPorts(input: Bool) -> [LV2Port] { ports.filter { $0.kind == .audio && $0.isInput == input } }

    /// The plugin with its sample-rate bounds in Hz.
    public func at(sampleRate: Int) -> LADSPAPlugin {
        var plugin = self
        plugin.ports = ports.map { $0.at(sampleRate: sampleRate) }
        return plugin
    }

    /// LADSPA_PROPERTY_HARD_RT_CAPABLE: run() neither blocks nor allocates.
    public var isHardRTCapable: Bool { ladspa.pointee.Properties & Int32(LADSPA_PROPERTY_HARD_RT_CAPABLE) != 0 }

    /// What a `ladspa` node hosting this plugin says of itself: its audio ports and its input controls as
    /// parameters.
    public var descriptor: NodeDescriptor {
        var descriptor = LADSPANode.descriptor
        descriptor.summary = name
        descriptor.ports = ports.filter { $0.kind == .audio }.map {
            PortDescriptor(.audio, $0.isInput ? .input : .output, name: $0.symbol)
        }
        descriptor.parameters = controlInputs.map(\.parameter)
        return descriptor
    }
}
