import Glibc
import GraphHost

/// `graphhost-fuzz`: built by scripts/fuzz with `-sanitize=fuzzer` and `-DFUZZING`, it is libFuzzer running the parser
/// `GRAPHHOST_FUZZ_TARGET` names (libFuzzer's options and corpus folders as arguments). Built plainly,
/// `graphhost-fuzz TARGET FILE...` runs files through a target (a finding, reproduced) and `--list` names the targets.
@main
struct FuzzMain {
    static func main() {
        #if FUZZING
            exit(fuzz())
        #else
            replay(Array(CommandLine.arguments.dropFirst()))
        #endif
    }

    /// Writes `text` to standard error.
    static func report(_ text: String) {
        _ = text.withCString { write(2, $0, strlen($0)) }
    }

    static func replay(_ arguments: [String]) {
        if arguments.first == "--list" {
            for target in ParserEntryPoints.all { print("\(target.name)\t\(target.about)") }
            return
        }
        guard let name = arguments.first, let target = ParserEntryPoints.target(named: name) else {
            report("usage: graphhost-fuzz --list | TARGET FILE...\n")
            exit(2)
        }
        for path in arguments.dropFirst() {
            guard let file = fopen(path, "rb") else {
                report("graphhost-fuzz: cannot read \(path)\n")
                exit(1)
            }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while case let n = fread(&buffer, 1, buffer.count, file), n > 0 { bytes += buffer[..<n] }
            fclose(file)
            target.run(bytes)
            print("\(path): ran")
        }
    }
}

#if FUZZING
    /// The target `GRAPHHOST_FUZZ_TARGET` names, chosen before the first input.
    nonisolated(unsafe) private var chosen: ParserEntryPoints.Target?

    /// libFuzzer's entry for a program with a main of its own.
    @_silgen_name("LLVMFuzzerRunDriver")
    private func runDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    extension FuzzMain {
        static func fuzz() -> Int32 {
            let name = getenv("GRAPHHOST_FUZZ_TARGET").map { String(cString: $0) } ?? ""
            guard let target = ParserEntryPoints.target(named: name) else {
                report(
                    "graphhost-fuzz: set GRAPHHOST_FUZZ_TARGET to one of: "
                        + ParserEntryPoints.all.map(\.name).joined(separator: ", ") + "\n")
                return 2
            }
            chosen = target
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            return runDriver(&argc, &argv) { data, size in
                chosen?.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
                return 0
            }
        }
    }
#endif
