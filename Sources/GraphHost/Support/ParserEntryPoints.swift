import CPipeWireGlue
import FoundationEssentials
import Glibc

/// Every parser of outside input, fed raw bytes as they could arrive from a file, a socket, a server or PipeWire: the
/// fuzz targets (`graphhost-fuzz`, `scripts/fuzz`) and their regression tests (FuzzRegressionTests) run them. A parser
/// may reject its input, which is its job; an entry point traps only where the parser broke a promise of its own (an
/// error that names nothing, more bytes out than in).
public enum ParserEntryPoints {
    /// One parser: its name (the fuzz target's), what it reads, and a run over one input.
    public struct Target: Sendable {
        public let name: String
        public let about: String
        public let run: @Sendable ([UInt8]) -> Void
    }

    public static let all: [Target] = [
        Target(name: "graph", about: "graph JSON (nodes, links, chains, routes, positions)", run: graph),
        Target(name: "midi-file", about: "Standard MIDI Files", run: midiFile),
        Target(name: "hls-playlist", about: "HLS master and media playlists", run: hlsPlaylist),
        Target(name: "osc-message", about: "OSC datagrams and the requests they carry", run: oscMessage),
        Target(name: "icy-metadata", about: "an Icecast stream's interleaved metadata and titles", run: icyMetadata),
        Target(name: "media-tags", about: "an MP3 file's ID3 tags, as `status` reports them", run: mediaTags),
        Target(name: "mp3-frames", about: "the MPEG frame guard before libmpg123", run: mp3Frames),
        Target(name: "command", about: "the command language (console, socket, ctl)", run: command),
        Target(name: "props-params", about: "a PipeWire Props param's params struct (C glue)", run: propsParams),
        Target(name: "eq-file", about: "AutoEQ ParametricEQ.txt and Equalizer APO files", run: eqFile),
        Target(name: "web-message", about: "the web page's WebSocket messages", run: webMessage),
        Target(name: "sap-announcement", about: "SAP announcements of RTP sessions (SDP)", run: sapAnnouncement),
        Target(name: "rtp-packet", about: "an RTP packet's header (CSRCs, extension, padding)", run: rtpPacket),
    ]

    public static func target(named name: String) -> Target? { all.first { $0.name == name } }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// A rejection must say what is wrong.
    static func named(_ error: any Error) {
        precondition(!String(describing: error).isEmpty, "an error that says nothing: \(type(of: error))")
    }

    static func graph(_ bytes: [UInt8]) {
        do {
            _ = try GraphDocument.parse(text: text(bytes), file: URL(fileURLWithPath: "/nonexistent/fuzz.json"))
        } catch {
            named(error)
        }
    }

    static func midiFile(_ bytes: [UInt8]) {
        do { _ = try MIDIFile(bytes: bytes, name: "fuzz.mid") } catch { named(error) }
    }

    static func hlsPlaylist(_ bytes: [UInt8]) {
        do { _ = try HLSPlaylist.parse(text(bytes), url: "http://127.0.0.1/fuzz.m3u8") } catch { named(error) }
    }

    static func oscMessage(_ bytes: [UInt8]) {
        do {
            _ = try OSCRequest.parse(try OSCMessage(datagram: bytes))
        } catch {
            named(error)
        }
    }

    /// The first byte sets the metadata interval (1–256 bytes); the rest arrives in two reads split where the second
    /// byte says.
    static func icyMetadata(_ bytes: [UInt8]) {
        guard bytes.count >= 2 else { return }
        var splitter = IcyMetadataSplitter(interval: Int(bytes[0]) + 1)
        let body = Array(bytes[2...])
        let cut = body.isEmpty ? 0 : Int(bytes[1]) % body.count
        var audio = 0
        body.withUnsafeBytes { raw in
            for part in [raw[..<cut], raw[cut...]] {
                splitter.feed(UnsafeRawBufferPointer(rebasing: part), audio: { audio += $0.count }, title: { _ in })
            }
        }
        precondition(audio <= body.count, "more audio out than bytes in")
    }

    static func mediaTags(_ bytes: [UInt8]) {
        let path = "/tmp/graphhost-fuzz-tags-\(getpid()).mp3"
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { return }
        defer { unlink(path) }
        _ = MediaTags.read(path: path)
    }

    /// The whole input in reads of the size its first byte gives (1–256 bytes), then the end.
    static func mp3Frames(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let step = Int(first) + 1
        let frameGuard = MPEGFrameGuard()
        var out = 0
        let body = Array(bytes.dropFirst())
        body.withUnsafeBytes { raw in
            var at = 0
            repeat {
                let end = min(at + step, raw.count)
                frameGuard.filter(UnsafeRawBufferPointer(rebasing: raw[at..<end]), final: end == raw.count) { f, _ in
                    out += f.count
                }
                at = end
            } while at < raw.count
        }
        precondition(out <= body.count, "more bytes passed on (\(out)) than came in (\(body.count))")
    }

    static func command(_ bytes: [UInt8]) {
        for line in text(bytes).split(whereSeparator: \.isNewline) {
            do { _ = try Command.parse(String(line)) } catch { named(error) }
            do { _ = try Subscription.parse(String(line)) } catch { named(error) }
        }
    }

    /// The input as a pod of the size its header claims, as PipeWire hands a param on (the protocol checks that a
    /// pod fits its message; what is inside is the sender's). Every pair it reports has a name, and it reports as
    /// many as it says it found.
    static func propsParams(_ bytes: [UInt8]) {
        guard bytes.count >= 8 else { return }
        let size = Int(UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24)
        guard size <= bytes.count - 8 else { return }
        // Aligned as PipeWire's buffers are.
        let aligned = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 8)
        defer { aligned.deallocate() }
        bytes.withUnsafeBytes { aligned.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        var received = 0
        let found = gh_parse_param_props(
            aligned.assumingMemoryBound(to: spa_pod.self),
            { target, name, _, _ in
                precondition(name != nil, "a pair without a name")
                target!.assumingMemoryBound(to: Int.self).pointee += 1
            }, &received)
        precondition(Int(found) == received, "\(found) pairs found, \(received) reported")
    }

    static func eqFile(_ bytes: [UInt8]) {
        do { _ = try EqualizerAPOFile.parse(text(bytes)) } catch { named(error) }
    }

    /// An announcement taken names a session a receiver can open: a port in range, 1…8 channels.
    static func sapAnnouncement(_ bytes: [UInt8]) {
        guard let found = bytes.withUnsafeBytes({ SAPAnnouncement($0) }) else { return }
        precondition((1...65535).contains(found.session.port) && (1...8).contains(found.session.channels))
    }

    /// A header taken leaves its payload within the packet, padding taken off.
    static func rtpPacket(_ bytes: [UInt8]) {
        var count = bytes.count
        guard let header = RTPHeader(bytes, count: &count) else { return }
        precondition(header.payloadOffset >= 12 && header.payloadOffset <= count && count <= bytes.count)
    }

    static func webMessage(_ bytes: [UInt8]) {
        let (_, request) = WebRequest.decode(text(bytes))
        if case .failure(let refusal) = request { named(refusal) }
    }
}
