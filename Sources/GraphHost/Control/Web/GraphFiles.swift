import Glibc

/// The graph files the page may load: the `.json` files in the running graph's folder (not below it), by name, that
/// `FileAccess.remote` lets it read (a symlink only when it resolves to a regular file inside the folder or
/// graphhost's own).
enum GraphFiles {
    static func list(folder: String) -> [String] {
        guard let dir = opendir(folder) else { return [] }
        defer { closedir(dir) }
        let files = FileAccess.remote(graphFolder: folder)
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".json"), !name.hasSuffix(".schema.json"), !name.hasPrefix("."),
                files.allows(folder + "/" + name)
            {
                names.append(name)
            }
        }
        return names.sorted()
    }

    /// The path of `name` if it is one of the folder's graph files; nil for anything else (another folder, `..`).
    static func path(_ name: String, folder: String) -> String? {
        list(folder: folder).contains(name) ? folder + "/" + name : nil
    }
}
