import FoundationEssentials

/// An isolated plugin's own state (`LV2Instance.savedStates()`: Turtle per instance) as one word for the helper's line
/// channel: the JSON array in base64; empty when the plugin keeps none.
enum SavedPluginState {
    static func encode(_ texts: [String]) -> String {
        guard !texts.isEmpty, let json = try? JSONEncoder().encode(texts) else { return "" }
        return json.base64EncodedString()
    }

    static func decode(_ word: String) throws -> [String] {
        guard let json = Data(base64Encoded: word) else {
            throw PluginIsolationError.refused("the saved plugin state is not base64")
        }
        return try JSONDecoder().decode([String].self, from: json)
    }
}
