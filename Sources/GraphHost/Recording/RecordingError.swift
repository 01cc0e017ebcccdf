/// Why a sound file could not be written or read, naming the file.
public enum RecordingError: Error, CustomStringConvertible, Sendable {
    case cannotWrite(path: String, reason: String)
    case writeFailed(path: String, reason: String)
    case cannotRead(path: String, reason: String)

    public var description: String {
        switch self {
        case .cannotWrite(let path, let reason): return "cannot write '\(path)': \(reason)"
        case .writeFailed(let path, let reason): return "writing '\(path)' failed: \(reason)"
        case .cannotRead(let path, let reason): return "cannot read '\(path)': \(reason)"
        }
    }
}
