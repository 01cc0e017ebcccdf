import CSystemdGlue
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import Synchronization

/// MPRIS on the session bus (`org.mpris.MediaPlayer2.graphhost.NAME`), so media keys, desktop widgets and playerctl
/// reach a playing graph: Play, Pause, PlayPause and Stop become `play`/`pause`, Quit becomes `quit`; PlaybackStatus,
/// Metadata (the first stream's ID3 or ICY title and artist, its URL, a file's length) and Position come from
/// `status`. One bus thread owns the sd-bus connection; events wake it through an eventfd. MPRIS is optional: with no
/// session bus, or the name owned by another process, `start` logs why and the run goes on without it.
public final class MPRISService: ControlSurface, Sendable {
    /// The bus name requested.
    public let busName: String
    private let logger: Logger
    /// How often the bus thread reads `status` when no event woke it (a file's tags and length are read after it
    /// starts).
    static let refreshMilliseconds: Int32 = 1000

    private struct Running {
        var thread: JoinableThread?
        var wakeup: LoopWakeup?
        var stopping = false
    }
    private let running = Mutex(Running())

    /// A service for the run whose node name is `name`.
    public init(name: String, logger: Logger) {
        busName = MPRISBusName.forRun(name: name)
        self.logger = logger
    }

    public func start(control: LiveControl) throws {
        let wakeup = LoopWakeup()
        let opened = Mutex<(code: Int32, message: String)?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let busName = busName
        let logger = logger
        let thread = JoinableThread(name: "graphhost-mpris") { [self] in
            let player = MPRISPlayer(control: control)
            let result = player.open(busName: busName)
            opened.withLock { $0 = result }
            ready.signal()
            guard result.code == 0 else { return }
            player.refresh()
            while !running.withLock({ $0.stopping }) {
                let woke = player.wait(
                    wakeFD: wakeup.fd, maxWaitMilliseconds: control.resting ? -1 : Self.refreshMilliseconds)
                if woke < 0 {
                    logger.warning(
                        """
                        MPRIS: lost the session bus (\(String(cString: strerror(-woke)))); \
                        media keys no longer reach this run
                        """
                    )
                    break
                }
                if woke > 0 { wakeup.drain() }
                if running.withLock({ $0.stopping }) { break }
                player.refresh()
            }
            player.close()
        }
        ready.wait()
        let result = opened.withLock { $0 }!
        switch result.code {
        case 0:
            running.withLock { $0 = Running(thread: thread, wakeup: wakeup) }
            control.addListener { _ in wakeup.signal() }
            control.addRestingListener { wakeup.signal() }
            logger.info("MPRIS: \(busName) on the session bus")
        case Int32(GH_MPRIS_NO_BUS):
            logger.info("MPRIS off: \(result.message) (set DBUS_SESSION_BUS_ADDRESS, or --no-mpris)")
            thread.join()
        case Int32(GH_MPRIS_NAME_TAKEN):
            logger.warning(
                """
                MPRIS off: \(result.message); another run has this \
                --name (give a different --name for media keys here)
                """
            )
            thread.join()
        default:
            logger.warning("MPRIS off: \(result.message)")
            thread.join()
        }
    }

    public func stop() {
        let (thread, wakeup) = running.withLock { running -> (JoinableThread?, LoopWakeup?) in
            running.stopping = true
            return (running.thread, running.wakeup)
        }
        wakeup?.signal()
        thread?.join()
    }
}
