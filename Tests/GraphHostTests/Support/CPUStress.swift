import Foundation

/// stress-ng keeping `cores` cores busy, for at most `seconds` (a test that stops early ends it with `stop`).
final class CPUStress {
    private let process = Process()

    init(cores: Int, seconds: Int) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/stress-ng")
        process.arguments = ["--cpu", "\(cores)", "--timeout", "\(seconds)s", "--quiet"]
        try process.run()
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}
