/// Why a kernel benchmark could not be set up.
public enum BenchmarkError: Error, CustomStringConvertible, Sendable {
    case noPlugin(uri: String)
    case notLV2Kernel

    public var description: String {
        switch self {
        case .noPlugin(let uri): return "no LV2 plugin '\(uri)'"
        case .notLV2Kernel: return "not an LV2 kernel"
        }
    }
}
