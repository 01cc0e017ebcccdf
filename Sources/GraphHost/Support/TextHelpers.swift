import FoundationEssentials
import Glibc

/// What FoundationEssentials leaves out of Foundation's string API and graphhost uses (trimming here; C-style
/// number formatting and `~` in paths in `Format`). The control world imports FoundationEssentials only, which
/// keeps Foundation's ICU and CoreFoundation out of the process (about 9 MiB of resident memory).
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

/// Writes text to standard error.
public func writeToStandardError(_ text: String) {
    _ = text.withCString { write(2, $0, strlen($0)) }
}

/// Whether `path` is a directory (false when it does not exist).
func isDirectory(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
}
