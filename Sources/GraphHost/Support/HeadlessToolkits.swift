import Glibc

/// Plugins that start a GUI toolkit from their audio code (Qt, in synthv1, drumkv1, samplv1 and padthv1) abort the
/// process when no display is there. Without one (DISPLAY and WAYLAND_DISPLAY unset or empty), Qt is given its
/// offscreen platform, unless the user chose one; graphhost never shows a plugin's window.
public enum HeadlessToolkits {
    /// Call once at start, before any thread runs.
    public static func prepare() {
        let set = { (name: String) in getenv(name).map { $0.pointee != 0 } ?? false }
        guard !set("DISPLAY"), !set("WAYLAND_DISPLAY") else { return }
        setenv("QT_QPA_PLATFORM", "offscreen", 0)
    }
}
