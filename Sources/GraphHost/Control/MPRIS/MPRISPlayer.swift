import CSystemdGlue
import FoundationEssentials
import Glibc

/// The MPRIS object of a run, owned by the bus thread: everything that touches sd-bus runs there. Methods arrive
/// from sd-bus as callbacks and become commands for `LiveControl.perform`; `refresh` reads `status` and emits
/// PropertiesChanged for PlaybackStatus and Metadata when they changed.
final class MPRISPlayer {
    /// What `Stop` does on a live graph: it pauses (with the transport's fade) and reports "Stopped" until the next
    /// `play` from anywhere; the stream keeps its place (CanSeek is false, so there is no rewinding).
    private var stopped = false
    private let control: LiveControl
    private var handle: OpaquePointer?
    private var shownStatus: String?
    /// nil until the first refresh; .some(nil) while the graph has no stream.
    private var shownTrack: MPRISTrack??
    /// Numbers the tracks shown, for mpris:trackid.
    private var trackNumber = 0
    /// The last method failure, kept alive for sd-bus until the next call.
    private var failure: UnsafeMutablePointer<CChar>?

    init(control: LiveControl) {
        self.control = control
    }

    deinit { free(failure) }

    /// Connects and requests `busName`; on failure the code (GH_MPRIS_*) and message.
    func open(busName: String) -> (code: Int32, message: String) {
        var error = [CChar](repeating: 0, count: 512)
        let callbacks = gh_mpris_callbacks(
            context: Unmanaged.passUnretained(self).toOpaque(),
            command: { context, method in
                Unmanaged<MPRISPlayer>.fromOpaque(context!).takeUnretainedValue().command(String(cString: method!))
            },
            position: { context in
                Unmanaged<MPRISPlayer>.fromOpaque(context!).takeUnretainedValue().positionMicroseconds()
            })
        var opened: OpaquePointer?
        let code = gh_mpris_open(&opened, busName, callbacks, &error, error.count)
        handle = opened
        return (code, String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Handles bus messages and waits for the bus or `wakeFD` (at most `maxWaitMilliseconds`): 1 when woken, 0 when
    /// not, a negative errno when the connection failed.
    func wait(wakeFD: Int32, maxWaitMilliseconds: Int32) -> Int32 {
        gh_mpris_wait(handle, wakeFD, maxWaitMilliseconds)
    }

    func close() {
        gh_mpris_close(handle)
        handle = nil
    }

    /// Emits what changed since the last refresh.
    func refresh() {
        guard let handle, let status = status() else { return }
        let playing = status.playing
        if playing { stopped = false }
        let playbackStatus = playing ? "Playing" : stopped ? "Stopped" : "Paused"
        if playbackStatus != shownStatus {
            shownStatus = playbackStatus
            gh_mpris_set_playback_status(handle, playbackStatus)
        }
        let track = MPRISTrack(status: status)
        if shownTrack == nil || shownTrack! != track {
            shownTrack = .some(track)
            trackNumber += 1
            let trackID =
                track == nil ? "/org/mpris/MediaPlayer2/TrackList/NoTrack" : "/org/graphhost/track/\(trackNumber)"
            trackID.withCString { id in
                withOptionalCString(track?.title) { title in
                    withOptionalCString(track?.artist) { artist in
                        withOptionalCString(track?.url) { url in
                            var metadata = gh_mpris_metadata(
                                track_id: id, title: title, artist: artist, url: url,
                                length_us: track?.lengthMicroseconds ?? -1)
                            gh_mpris_set_metadata(handle, &metadata)
                        }
                    }
                }
            }
        }
    }

    // MARK: callbacks from sd-bus

    /// Play, Pause, PlayPause, Stop or Quit; nil when done, else the reason.
    private func command(_ method: String) -> UnsafePointer<CChar>? {
        let request: Command
        switch method {
        case "Play": request = .play
        case "Pause", "Stop": request = .pause
        case "PlayPause": request = control.withSession { $0.paused } ? .play : .pause
        case "Quit":
            control.requestQuit()
            return nil
        default: return remember("unknown method \(method)")
        }
        do {
            _ = try control.perform(request)
        } catch {
            return remember("error: \(error)")
        }
        if method == "Stop" { stopped = true }
        refresh()
        return nil
    }

    /// The first stream's position in its media, else the run's; microseconds.
    private func positionMicroseconds() -> Int64 {
        guard let status = status() else { return 0 }
        let seconds = status.streams.first?.position ?? status.position
        return Int64((seconds * 1e6).rounded())
    }

    private func status() -> RunStatus? {
        guard case .status(let status) = try? control.perform(.status) else { return nil }
        return status
    }

    private func remember(_ message: String) -> UnsafePointer<CChar>? {
        free(failure)
        failure = strdup(message)
        return UnsafePointer(failure)
    }
}

/// Calls `body` with a C string for `text`, or NULL.
private func withOptionalCString<T>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> T) -> T {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
