import FoundationEssentials
import Glibc

/// Number formatting shared by messages and printouts.
public enum Format {
    /// A number without a trailing ".0" when it is whole.
    public static func number(_ x: Double) -> String {
        if x == x.rounded() && abs(x) < 1e15 { return String(Int(x)) }
        return String(x)
    }

    /// A Float as its shortest decimal (0.45, not 0.44999998807907104).
    public static func number(_ x: Float) -> String {
        number(Double(String(x)) ?? Double(x))
    }

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
