import NIOCore

/// Runs a task's jobs on one NIO event loop: the pages' tasks (their WebSocket reads, replies and events) run on the
/// thread that serves their connections, with no hop between threads.
final class EventLoopTaskExecutor: TaskExecutor {
    let loop: any EventLoop

    init(_ loop: any EventLoop) { self.loop = loop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
