import ArgumentParser
import GraphHost

/// `--threads N` of `run`, `render` and `service run`: how many threads render a slice.
struct ThreadsOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Threads that render the graph: independent branches of a heavy graph render at once, the output "
                + "identical to one thread's (default: the cores, less one where there are more than two). With 1, "
                + "render keeps to one core, its stream decoders included.",
            valueName: "N"))
    var threads: Int = GraphSession.defaultThreads

    func validate() throws {
        guard (1...64).contains(threads) else { throw ValidationError("--threads \(threads) is not 1…64") }
    }
}
