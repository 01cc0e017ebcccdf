import Foundation

/// LV2 plugins the tests use: Debian's, by URI, and the bundles under Tests/Fixtures (built by the tests with cc).
enum TestPlugins {
    static let amp = "http://plugin.org.uk/swh-plugins/amp"
    static let fixtures = TestSupport.root.appendingPathComponent("Tests/Fixtures").path
    /// Lets a graphhost process find the fixture bundles.
    static var lv2Path: [String: String] { ["LV2_PATH": fixtures + ":/usr/lib/x86_64-linux-gnu/lv2:/usr/lib/lv2"] }
}
