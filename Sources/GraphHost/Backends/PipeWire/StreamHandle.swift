import CPipeWireGlue
import FoundationEssentials
import Glibc

/// A pw_stream graphhost opens beside its main playback stream (a MIDI input, a live input, a further output), with
/// its listener and the render-memory state (`Target`) its callbacks read through their userdata. Made, connected and
/// destroyed under the player's thread loop lock.
final class StreamHandle<Target> {
    let stream: OpaquePointer
    let target: UnsafeMutablePointer<Target>
    private let listener: UnsafeMutablePointer<spa_hook>
    private let events: UnsafeMutablePointer<pw_stream_events>

    /// Creates the stream with `properties` (PW_KEY_* names and values) and its state (`makeTarget` gets the stream);
    /// `setEvents` fills in the callbacks, which receive a pointer to the target as their data.
    init(
        core: OpaquePointer, name: String, properties: [(String, String)], makeTarget: (OpaquePointer) -> Target,
        setEvents: (inout pw_stream_events) -> Void
    ) throws {
        guard let props = pw_properties_new_string("") else { throw PlaybackError.stream("cannot create properties") }
        for (key, value) in properties { pw_properties_set(props, key, value) }
        pw_properties_set(props, PW_KEY_NODE_NAME, name)
        pw_properties_set(props, PW_KEY_APP_NAME, "graphhost")
        guard let stream = pw_stream_new(core, name, props) else {
            throw PlaybackError.stream("cannot create the stream '\(name)'")
        }
        self.stream = stream
        target = .allocateRender(capacity: 1)
        target.initialize(to: makeTarget(stream))
        listener = .allocate(capacity: 1)
        listener.initialize(to: spa_hook())
        events = .allocate(capacity: 1)
        var e = pw_stream_events()
        e.version = UInt32(PW_VERSION_STREAM_EVENTS)
        setEvents(&e)
        events.initialize(to: e)
        pw_stream_add_listener(stream, listener, events, UnsafeMutableRawPointer(target))
    }

    /// Connects with the formats `build` writes into a scratch buffer (valid while connecting only), with
    /// AUTOCONNECT, MAP_BUFFERS and RT_PROCESS; on failure destroys it (`cleanUp` as for `destroy`) and throws.
    func connect(
        _ direction: spa_direction, what: String, cleanUp: (UnsafeMutablePointer<Target>) -> Void = { _ in },
        trigger: Bool = false, formats build: (UnsafeMutablePointer<UInt8>, UInt32) -> [UnsafePointer<spa_pod>?]
    ) throws {
        let flags = pw_stream_flags(
            PW_STREAM_FLAG_AUTOCONNECT.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue
                | PW_STREAM_FLAG_RT_PROCESS.rawValue | (trigger ? PW_STREAM_FLAG_TRIGGER.rawValue : 0))
        var buffer = [UInt8](repeating: 0, count: 2048)
        let result = buffer.withUnsafeMutableBufferPointer { bytes -> Int32 in
            var params = build(bytes.baseAddress!, UInt32(bytes.count))
            return params.withUnsafeMutableBufferPointer {
                pw_stream_connect(stream, direction, UInt32.max, flags, $0.baseAddress, UInt32($0.count))
            }
        }
        if result < 0 {
            destroy(cleanUp)
            throw PlaybackError.stream("connecting \(what) failed: \(String(cString: strerror(-result)))")
        }
    }

    /// Writes the planar and interleaved 32-bit float formats at the graph's rate and channels (for `connect`).
    static func audioFormats(_ format: GraphFormat) -> (UnsafeMutablePointer<UInt8>, UInt32) -> [UnsafePointer<
        spa_pod
    >?] {
        { bytes, size in
            var params: [UnsafePointer<spa_pod>?] = [nil, nil]
            let count = gh_build_formats(bytes, size, UInt32(format.sampleRate), UInt32(format.channels), &params)
            return Array(params.prefix(Int(count)))
        }
    }

    /// Whether a negotiated Format param is planar; nil for anything that is not 32-bit float audio.
    static func isPlanar(_ param: UnsafePointer<spa_pod>) -> Bool? {
        var rate: UInt32 = 0
        var channels: UInt32 = 0
        var planar: Int32 = 0
        return gh_parse_format(param, &rate, &channels, &planar) == 1 ? planar != 0 : nil
    }

    /// Destroys the stream and frees its state (`cleanUp` first releases what the target owns).
    func destroy(_ cleanUp: (UnsafeMutablePointer<Target>) -> Void = { _ in }) {
        pw_stream_destroy(stream)
        cleanUp(target)
        target.deinitialize(count: 1).deallocateRender()
        listener.deallocate()
        events.deallocate()
    }
}
