import CThreadGlue

/// Which CPUs a thread may run on. An offline render on one core (`render --threads 1`) keeps every thread to the core
/// it started on, its streams' decoder threads included: what a decoder writes into its ring is then still in that
/// core's caches when the render reads it, and nothing waits on a wakeup from another core.
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
