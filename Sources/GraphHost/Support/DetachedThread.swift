import CThreadGlue
import Glibc

/// Starts a thread that nobody joins and hands it `body` with everything it captured: the caller gives that up
/// (`sending`), so the thread may hold state that is not Sendable (the console's line editor).
public enum DetachedThread {
    private final class Start {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    public static func start(name: String, _ body: sending @escaping () -> Void) {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { argument in
                let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
                gh_name_thread(start.name)
                start.body()
                return nil
            }, start)
        precondition(created == 0, "cannot start the thread '\(name)': \(String(cString: strerror(created)))")
        pthread_detach(thread)
    }
}
