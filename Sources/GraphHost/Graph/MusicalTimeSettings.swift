import GraphHostCore

extension GraphDocument {
    /// The top-level `transport`: tempo, meter and rolling, told to plugins that follow the host's transport
    /// (time:Position); nil when the graph declares none. Defaults: 120 bpm, 4/4, rolling.
    static func parseMusicalTime(_ value: JSONValue?, issues: inout GraphIssues) -> MusicalTime.Settings? {
        guard let value else { return nil }
        guard value.objectMembers != nil else {
            issues.report(
                "transport",
                "expected an object like {\"bpm\": 120, \"beatsPerBar\": 4, "
                    + "\"beatUnit\": 4, \"rolling\": true}, found \(value.typeName)",
                at: value)
            return nil
        }
        let s = NodeSettings(object: value, path: "transport")
        s.rejectUnknownKeys(["bpm", "beatsPerBar", "beatUnit", "rolling"], issues: &issues)
        var settings = MusicalTime.Settings()
        if let bpm = s.number("bpm", in: 1...999, issues: &issues) { settings.beatsPerMinute = bpm }
        if let perBar = s.number("beatsPerBar", in: 1...64, issues: &issues) { settings.beatsPerBar = perBar }
        if let unit = s.integer("beatUnit", in: 1...64, issues: &issues) { settings.beatUnit = unit }
        if let rolling = s.bool("rolling", issues: &issues) { settings.rolling = rolling }
        return settings
    }
}
