import CSystemdGlue
import FoundationEssentials
import Glibc

/// Calls `changed` (on a thread of its own) when a file is saved: written and closed, or renamed or linked into place
/// as editors save. It watches the file's folder with inotify and sleeps in between, so it costs nothing while the
/// file rests (a poll of the file's time would wake the process every turn).
final class FileWatch: Sendable {
    private let inotify: Int32
    private let stopEvent: Int32
    private let thread: JoinableThread

    init(path: String, changed: @escaping @Sendable () -> Void) throws {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let folder = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        let inotify = inotify_init1(Int32(IN_CLOEXEC))
        let stopEvent = eventfd(0, Int32(EFD_CLOEXEC))
        guard inotify >= 0, stopEvent >= 0 else {
            throw SocketError.system("cannot watch \(path)", errno: errno)
        }
        let mask = UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_CREATE)
        guard inotify_add_watch(inotify, folder, mask) >= 0 else {
            let error = errno
            close(inotify)
            close(stopEvent)
            throw SocketError.system("cannot watch \(folder)", errno: error)
        }
        self.inotify = inotify
        self.stopEvent = stopEvent
        thread = JoinableThread(name: "graphhost-fwatch") {
            let size = 64 * 1024
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
            defer { buffer.deallocate() }
            while true {
                var fds = [
                    pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: stopEvent, events: Int16(POLLIN), revents: 0),
                ]
                guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { return }
                if fds[1].revents != 0 { return }
                guard fds[0].revents != 0 else { continue }
                let count = read(inotify, buffer, size)
                guard count > 0 else { continue }
                var offset = 0
                var saved = false
                while offset + MemoryLayout<inotify_event>.size <= count {
                    let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                    let length = Int(event.len)
                    if length > 0 {
                        let entry = String(
                            cString: (buffer + offset + MemoryLayout<inotify_event>.size).assumingMemoryBound(
                                to: CChar.self))
                        if entry == name { saved = true }
                    }
                    offset += MemoryLayout<inotify_event>.size + length
                }
                if saved { changed() }
            }
        }
    }

    /// Ends the watch and waits for its thread.
    func stop() {
        _ = eventfd_write(stopEvent, 1)
        thread.join()
        close(inotify)
        close(stopEvent)
    }
}
