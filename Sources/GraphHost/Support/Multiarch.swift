/// Debian's multiarch triplet for this build, which names the folders its plugin packages also install into
/// (`/usr/lib/x86_64-linux-gnu/lv2`, `/usr/lib/x86_64-linux-gnu/ladspa`).
enum Multiarch {
    static var triplet: String {
        #if arch(arm64)
            "aarch64-linux-gnu"
        #else
            "x86_64-linux-gnu"
        #endif
    }
}
