// swift-tools-version: 6.1
import PackageDescription

// The tests run from the release build (scripts/test builds it once, tests included), so the modules they import
// with @testable are compiled for testing there too; the program and the package are made from the same build.
let testableInRelease: [SwiftSetting] = [.unsafeFlags(["-enable-testing"], .when(configuration: .release))]

let package = Package(
    name: "graphhost",
    products: [
        .executable(name: "graphhost", targets: ["graphhost"]),
        .library(name: "GraphHost", targets: ["GraphHost"]),
        .library(name: "GraphHostCore", targets: ["GraphHostCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-atomics", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // Without its default traits: FullFoundation would load Foundation into every run (about 6 MiB).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
    ],
    targets: [
        // C targets (CONTRIBUTING.md): a system-library shim is C + the library's name without lib or a version;
        // graphhost's own C is C + the library it wraps (or its concern) + Glue, and its names start with gh_.
        .systemLibrary(name: "CMPG123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"])]),
        .systemLibrary(name: "CSoxr", pkgConfig: "soxr", providers: [.apt(["libsoxr-dev"])]),
        .systemLibrary(name: "CSndfile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CFFTW3", pkgConfig: "fftw3f", providers: [.apt(["libfftw3-dev"])]),
        .systemLibrary(name: "CEbur128", pkgConfig: "libebur128", providers: [.apt(["libebur128-dev"])]),
        // FFmpeg's headers (libavformat-dev, libavcodec-dev); its libraries are loaded with dlopen when first needed.
        .target(name: "CFFmpegGlue", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "CThreadGlue"),
        // Futexes, the spin hint and the thread id: what render threads may call to wait for each other.
        .target(name: "CRenderWaitGlue"),
        // The level meter's inner loop in AVX2 where the processor has it (Swift has no per-function target).
        .target(name: "CMeterGlue"),
        .target(name: "CDitherGlue"),
        // The corrupt-audio guard's test in AVX2 where the processor has it.
        .target(name: "CAudioGuardGlue"),
        // The iPod EQ's filter bank, 28 frames a turn with AVX-512, 8 with AVX2, where the processor has them.
        .target(name: "CFilterBankGlue"),
        .target(name: "CCleanAllocationGlue"),
        .systemLibrary(name: "CPipeWire", pkgConfig: "libpipewire-0.3", providers: [.apt(["libpipewire-0.3-dev"])]),
        .target(name: "CPipeWireGlue", dependencies: ["CPipeWire"]),
        .systemLibrary(name: "CLV2", pkgConfig: "lv2", providers: [.apt(["lv2-dev"])]),
        .systemLibrary(name: "CLilv", pkgConfig: "lilv-0", providers: [.apt(["liblilv-dev", "lv2-dev"])]),
        .target(name: "CLV2Glue", dependencies: ["CLV2"]),
        .target(name: "CPluginProbeGlue", dependencies: ["CLilv"]),
        // Shared memory, eventfds and pidfds for plugins isolated in a helper process.
        .target(name: "CIsolationGlue"),
        .target(name: "CLADSPAGlue", dependencies: ["CLV2"], linkerSettings: [.linkedLibrary("dl")]),
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // libcurl's headers; the library is loaded with dlopen by the first HTTP stream.
        .target(name: "CCurlGlue", dependencies: ["CCurl"], linkerSettings: [.linkedLibrary("dl")]),
        .systemLibrary(name: "CEdit", pkgConfig: "libedit", providers: [.apt(["libedit-dev"])]),
        .target(name: "CEditGlue", dependencies: ["CEdit"]),
        .systemLibrary(name: "CLo", pkgConfig: "liblo", providers: [.apt(["liblo-dev"])]),
        .systemLibrary(name: "CSystemd", providers: [.apt(["libsystemd-dev"])]),
        // sd-bus's headers; libsystemd is loaded with dlopen by the first MPRIS player.
        .target(name: "CSystemdGlue", dependencies: ["CSystemd"], linkerSettings: [.linkedLibrary("dl")]),
        // The render world: engine, plans, rings and kernels, in Swift 6 mode. It imports only Atomics, Glibc, the
        // LV2 headers and the meter's loop (LayoutTests), and links no system library.
        .target(
            name: "GraphHostCore",
            dependencies: [
                "CLV2", "CMeterGlue", "CFilterBankGlue", "CRenderWaitGlue",
                .product(name: "Atomics", package: "swift-atomics"),
            ],
            swiftSettings: testableInRelease
        ),
        // Pure math: the graphic EQ's design, its parallel form and the factory presets.
        .target(name: "GraphHostDSP"),
        // The control world: graphs, compilation, sessions, node kinds, backends and control surfaces.
        .target(
            name: "GraphHost",
            dependencies: [
                "GraphHostCore", "GraphHostDSP",
                "CMPG123", "CFFmpegGlue", "CSoxr", "CSndfile", "CThreadGlue", "CRenderWaitGlue", "CCleanAllocationGlue",
                "CPipeWireGlue",
                "CLV2", "CLilv", "CLV2Glue", "CPluginProbeGlue", "CIsolationGlue", "CLADSPAGlue", "CCurlGlue", "CLo",
                "CSystemdGlue", "CFFTW3", "CEbur128", "CDitherGlue", "CAudioGuardGlue",
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            // The page's files: scripts/embed-page writes them into Control/Web/WebPageFiles.swift.
            exclude: ["Control/Web/Page"],
            swiftSettings: testableInRelease
        ),
        .executableTarget(
            name: "graphhost",
            dependencies: [
                "GraphHost", "CEditGlue",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The Swift runtime linked in: a process starts without the dynamic linker resolving its symbols
            // (static Foundation needs its two support libraries named).
            linkerSettings: [
                .unsafeFlags(
                    ["-static-stdlib", "-l_FoundationCollections", "-l_FoundationCShims"],
                    .when(configuration: .release))
            ]
        ),
        // The parsers of outside input under libFuzzer (scripts/fuzz builds it with -sanitize=fuzzer and -DFUZZING);
        // built plainly, it replays inputs through them.
        .executableTarget(name: "graphhost-fuzz", dependencies: ["GraphHost"]),
        // For tests: an output device with speaker and headphone routes, which this machine's hardware lacks.
        .executableTarget(
            name: "route-device-fixture", dependencies: ["CPipeWire"], path: "Tests/Fixtures/RouteDevice"),
        .target(name: "AllocationCounter", dependencies: ["CCleanAllocationGlue"], path: "Tests/AllocationCounter"),
        .testTarget(
            name: "GraphHostTests",
            dependencies: [
                "GraphHost", "AllocationCounter", .product(name: "Logging", package: "swift-log"),
                .product(name: "Atomics", package: "swift-atomics"),
            ],
            // The tests' own code unoptimized and file by file (two jobs at a time): it compiles in half the time of
            // the optimized whole module, and what it tests is built as released.
            swiftSettings: [.unsafeFlags(["-Onone", "-no-whole-module-optimization"], .when(configuration: .release))]
        ),
    ]
)

// MARK: LV2 bundle Plugins/graphhost-ipod-eq.lv2 (the built-in ipod-eq as a plugin; scripts/build-plugins)
package.products.append(.library(name: "GraphHostIPodEQLV2", type: .dynamic, targets: ["GraphHostIPodEQLV2"]))
package.targets += [
    .target(name: "CIPodEQLV2Glue"),
    // nodelete: Swift registers the library's type metadata with the runtime, so it must never be unloaded
    // (hosts dlclose plugins when an instance is freed). Release links the Swift runtime in, as the package ships it.
    .target(
        name: "GraphHostIPodEQLV2", dependencies: ["GraphHostCore", "GraphHostDSP", "CIPodEQLV2Glue"],
        linkerSettings: [
            .unsafeFlags(["-Xlinker", "-z", "-Xlinker", "nodelete"]),
            .unsafeFlags(["-static-stdlib"], .when(configuration: .release)),
        ]),
]
