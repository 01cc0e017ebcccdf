import FoundationEssentials
import Glibc

/// Which files a command, and a graph it loads, may name. The owner (the console, the owner-only socket, the command
/// line) may name any file the user can read. A remote surface (the page, OSC) and every graph it loads may name only
/// a regular file that resolves, symlinks included, to a place inside the running graph's folder or the user's
/// graphhost folder (`$XDG_CONFIG_HOME/graphhost`); its refusals name neither the file's content nor those folders'
/// absolute paths.
public struct FileAccess: Sendable, Equatable {
    /// The folders (real paths) a file must lie in; nil: any file the user can read.
    public let roots: [String]?
    /// Where a remote surface's relative paths start: the running graph's folder.
    let base: String?
    /// The folders as named (before symlinks are resolved) and as they are: what `redact` takes out.
    let shown: [String]

    /// Any file the user can read.
    public static let owner = FileAccess(roots: nil)

    /// Files inside `graphFolder` or the user's graphhost folder, for a remote surface.
    public static func remote(
        graphFolder: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> FileAccess {
        let configBase =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? "/root") + "/.config")
        let named = [graphFolder, configBase + "/graphhost"].map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        let folders = named.compactMap(Self.realPath)
        return FileAccess(roots: folders, base: Self.realPath(graphFolder), shown: named + folders)
    }

    init(roots: [String]?, base: String? = nil, shown: [String] = []) {
        self.roots = roots
        self.base = base
        self.shown = shown
    }

    /// The file a live command names (`set NODE file PATH`): the owner's path as given (relative to the working
    /// folder); a remote surface's relative to the graph's folder and confined.
    public func commandPath(_ given: String) throws(FileAccessError) -> String {
        guard roots != nil else { return URL(fileURLWithPath: given).standardizedFileURL.path }
        return try confine(given.hasPrefix("/") ? given : (base ?? "/nonexistent") + "/" + given, given: given)
    }

    /// `path` (already resolved against the graph's folder) if this access may read it: for the owner the path as
    /// given; for a remote surface its real path, which must be a regular file (`folder`: a folder) inside a root.
    /// `given` is what the command or graph named, the only text a refusal repeats.
    public func confine(_ path: String, given: String, folder: Bool = false) throws(FileAccessError) -> String {
        guard let roots else { return path }
        guard let real = Self.realPath(path), folder ? Self.isFolder(real) : Self.isRegularFile(real),
            roots.contains(where: { real == $0 || real.hasPrefix($0 == "/" ? $0 : $0 + "/") })
        else { throw FileAccessError(given: given) }
        return real
    }

    /// Whether `path` may be read, as `confine` decides.
    public func allows(_ path: String) -> Bool { (try? confine(path, given: path)) != nil }

    /// `text` with the roots' absolute paths taken out (a file in a root is named relative to it), for a reply to a
    /// remote surface.
    public func redact(_ text: String) -> String {
        guard roots != nil else { return text }
        var result = text
        for root in Set(shown).sorted(by: { $0.count > $1.count }) where root != "/" {
            result = result.replacing(root + "/", with: "").replacing(root, with: ".")
        }
        return result
    }

    /// The canonical absolute path of an existing file or folder (symlinks, `.` and `..` resolved), or nil.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func isRegularFile(_ path: String) -> Bool { fileType(path) == S_IFREG }

    static func isFolder(_ path: String) -> Bool { fileType(path) == S_IFDIR }

    private static func fileType(_ path: String) -> mode_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
    }
}

/// A file a remote surface may not read (outside its folders, missing, not a regular file): one sentence that repeats
/// only the name it was given.
public struct FileAccessError: Error, CustomStringConvertible, Sendable {
    public var given: String
    public var description: String {
        "'\(given)' is not a file in the graph's folder or graphhost's configuration folder "
            + "(a remote client may name only those)"
    }
}
