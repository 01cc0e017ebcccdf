import ArgumentParser

/// `--idle-after SECONDS` of `run` and `service run`: idle like a sink.
struct IdleOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Idle like a sink: after this many seconds of quiet with no stream playing, PipeWire stops running the "
                + "graph (no CPU, no wake-ups) until an application plays into one of its sinks or a command comes; "
                + "its outputs link passively. Off unless given.", valueName: "SECONDS"))
    var idleAfter: Double?

    func validate() throws {
        if let idleAfter, !(idleAfter >= 0) {
            throw ValidationError("--idle-after \(idleAfter) is not 0 or more seconds")
        }
    }
}
