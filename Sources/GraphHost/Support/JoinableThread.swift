import Dispatch
import Glibc

/// A named control-world thread that whoever started it can wait for.
final class JoinableThread: Sendable {
    private let done = DispatchSemaphore(value: 0)

    /// Starts `body` on a new thread called `name`.
    init(name: String, _ body: @escaping @Sendable () -> Void) {
        let done = done
        DetachedThread.start(name: name) {
            body()
            done.signal()
        }
    }

    /// Waits until the body has returned.
    func join() { done.wait() }
}
