import FoundationEssentials
import Glibc

/// What FoundationEssentials leaves out of Foundation's string API and graphhost uses: trimming, C-style number
/// formatting and `~` in paths. The control world imports FoundationEssentials only, which keeps Foundation's ICU
/// and CoreFoundation out of the process (about 9 MiB of resident memory).
extension StringProtocol {
    /// Without leading and trailing whitespace (newlines included).
    func trimmingWhitespace() -> String { trimming { $0.isWhitespace } }

    /// Without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String { trimming { $0 == " " || $0 == "\t" } }

    private func trimming(_ dropped: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !dropped($0) }) else { return "" }
        return String(self[first...lastIndex(where: { !dropped($0) })!])
    }
}

extension Format {
    /// C `printf` formatting of numbers (`%d`, `%.2f`).
    public static func printf(_ format: String, _ arguments: CVarArg...) -> String {
        withVaList(arguments) { list in
            var buffer = [CChar](repeating: 0, count: 512)
            let needed = Int(vsnprintf(&buffer, buffer.count, format, list))
            return needed < buffer.count ? String(cString: buffer) : String(cString: buffer) + "…"
        }
    }

    /// The text without leading and trailing spaces and tabs.
    public static func trimmed(_ text: some StringProtocol) -> String { text.trimmingSpaces() }

    /// A leading "~" as the home directory.
    static func expandingTilde(_ path: String) -> String {
        guard path.hasPrefix("~"), path.dropFirst().isEmpty || path.dropFirst().hasPrefix("/") else { return path }
        return (getenv("HOME").map { String(cString: $0) } ?? "~") + path.dropFirst()
    }
}

/// Writes text to standard error.
public func writeToStandardError(_ text: String) {
    _ = text.withCString { write(2, $0, strlen($0)) }
}

/// Whether `path` is a directory (false when it does not exist).
func isDirectory(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
}
