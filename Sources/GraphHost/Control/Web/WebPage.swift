/// The page the browser gets, kept in the binary: its files (HTML, CSS, JavaScript, SVG) are written into
/// `WebPageFiles.swift` by scripts/embed-page from the `Page/` folder beside this file.
public enum WebPage {
    /// One file of the page: its content type and text.
    public struct File: Sendable {
        public var type: String
        public var text: String
    }

    /// The page itself.
    static var index: File { files["index.html"]! }
}
