extension LV2PluginInfo {
    /// What an `lv2` node hosting this plugin says of itself, read from lilv: its signal ports, its input controls and
    /// properties as parameters, its presets and traits.
    public var descriptor: NodeDescriptor {
        var descriptor = LV2Node.descriptor
        descriptor.summary = name
        descriptor.ports = ports.compactMap { port in
            let signal: PortDescriptor.Signal
            switch port.kind {
            case .audio: signal = .audio
            case .cv: signal = .cv
            case .atom where port.supportsMIDI: signal = .event
            default: return nil
            }
            return PortDescriptor(
                signal, port.isInput ? .input : .output, role: port.isSideChain ? .side : .main, name: port.symbol)
        }
        descriptor.parameters =
            controlInputs.map(\.parameter)
            + properties.map { ParameterDescriptor(id: ParameterID($0.symbol), label: $0.label, valueType: .text) }
        descriptor.presets = presets.map(\.label)
        var traits: NodeTraits = [.canBypass]
        if isSource { traits.insert(.isSource) }
        if readsEvents || eventInputBesideAudio != nil { traits.insert(.readsEvents) }
        if sendsEvents { traits.insert(.sendsEvents) }
        if !descriptor.presets.isEmpty { traits.insert(.hasPresets) }
        if latencyPort != nil { traits.insert(.hasLatency) }
        if properties.contains(where: { $0.range == LV2URI.atomPath }) { traits.insert(.takesFiles) }
        descriptor.traits = traits
        return descriptor
    }
}

extension LV2Port {
    /// An input control port as a parameter: its symbol, name, unit, range, default and scale points; a toggle is a
    /// bool, an lv2:enumeration port an enumeration, an lv2:integer port an int.
    var parameter: ParameterDescriptor {
        let type: ParameterDescriptor.ValueType =
            isToggled ? .bool : isInteger ? .int : isEnumeration ? .enumeration : .float
        return ParameterDescriptor(
            id: ParameterID(symbol), label: name, unit: unit, minimum: Double(minimum ?? -.infinity),
            maximum: Double(maximum ?? .infinity), defaultValue: defaultValue.map { Double($0) },
            curve: isLogarithmic ? .log : .linear, valueType: type,
            labels: scalePoints.map { ParameterDescriptor.ValueLabel(label: $0.label, value: Double($0.value)) })
    }
}
