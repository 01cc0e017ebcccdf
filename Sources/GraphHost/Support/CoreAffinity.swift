import CThreadGlue

/// Which CPUs a thread may run on. An offline render on one core (`render --threads 1`) keeps every thread to the core
/// it started on, its streams' decoder threads included: what a decoder writes into its ring is read from that core's
/// caches, and no wakeup crosses cores (whether that saves CPU time depends on the machine's load: BENCHMARKS.md).
public enum CoreAffinity {
    /// Keeps the calling thread, and every thread it starts afterwards, to the CPU it runs on now; returns the CPU, or
    /// nil when the system refused (the threads then run where the scheduler puts them).
    @discardableResult
    public static func keepToCurrentCPU() -> Int? {
        let cpu = gh_keep_to_current_cpu()
        return cpu >= 0 ? Int(cpu) : nil
    }

    /// The CPU the calling thread runs on now.
    public static var currentCPU: Int? {
        let cpu = gh_current_cpu()
        return cpu >= 0 ? Int(cpu) : nil
    }

    /// How many CPUs the calling thread may run on.
    public static var allowedCPUs: Int { Int(gh_allowed_cpu_count()) }
}
