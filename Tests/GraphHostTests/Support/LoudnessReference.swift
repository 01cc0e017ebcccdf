import Foundation
import XCTest

/// EBU Tech 3341-style test signals (a 1 kHz sine whose level per channel steps over time, made by ffmpeg as 32-bit
/// float WAV) and ffmpeg's `ebur128` filter as the reference: its summary and its 100 ms frame lines.
enum LoudnessReference {
    /// A stretch of the signal: seconds and each channel's sine peak in dBFS (nil: silence). A stereo sine at -23
    /// dBFS reads -23 LUFS.
    struct Step {
        var seconds: Double
        var left: Double?
        var right: Double?
    }

    /// A stereo 48 kHz float WAV of a sine (1 kHz unless told, starting at `phase`) through `steps`, faded in and
    /// out over 50 ms, cached under `name`.
    static func signal(_ name: String, _ steps: [Step], frequency: Int = 1000, phase: Double = 0) throws -> String {
        let path = TestSupport.directory.appendingPathComponent("loudness-\(name).wav").path
        if FileManager.default.fileExists(atPath: path) { return path }
        func expression(_ level: (Step) -> Double?) -> String {
            var end = 0.0
            var parts: [(end: Double, amplitude: Double)] = []
            for step in steps {
                end += step.seconds
                parts.append((end, level(step).map { pow(10, $0 / 20) } ?? 0))
            }
            var gain = "\(parts.last!.amplitude)"
            for part in parts.dropLast().reversed() { gain = "if(lt(t,\(part.end)),\(part.amplitude),\(gain))" }
            return "\(gain)*sin(2*PI*\(frequency)*t+\(phase))"
        }
        let seconds = steps.reduce(0) { $0 + $1.seconds }
        try TestSupport.run([
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
            "aevalsrc='\(expression(\.left))|\(expression(\.right))':c=stereo:s=48000:d=\(seconds)",
            // 50 ms fades: an abrupt start or end overshoots between samples by the interpolators' ringing.
            "-af", "afade=t=in:d=0.05,afade=t=out:st=\(seconds - 0.05):d=0.05", "-c:a", "pcm_f32le", path,
        ])
        return path
    }

    /// What ffmpeg's `ebur128=peak=true` reads of a file.
    struct Reading {
        var integrated: Double
        var range: Double
        var truePeak: Double
        /// Each 100 ms frame line: its time and the momentary and short-term loudness then.
        var frames: [(time: Double, momentary: Double, shortTerm: Double)]
    }

    static func ffmpeg(_ path: String) throws -> Reading {
        // ffmpeg logs a line per 100 ms on standard error: to a file, so no pipe fills up.
        let log = path + ".ebur128.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = ["-nostats", "-hide_banner", "-i", path, "-af", "ebur128=peak=true", "-f", "null", "-"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try process.run()
        process.waitUntilExit()
        let text = try String(contentsOfFile: log, encoding: .utf8)
        guard process.terminationStatus == 0, let summary = text.range(of: "Summary:") else {
            throw TestSupport.ToolFailure(description: "ffmpeg ebur128 failed: \(text.suffix(2000))")
        }
        /// The number after `label` in `text`.
        func number(after label: String, in text: Substring) throws -> Double {
            guard let range = text.range(of: label) else {
                throw TestSupport.ToolFailure(description: "no '\(label)' in ffmpeg's output: \(text.prefix(2000))")
            }
            let rest = text[range.upperBound...].drop { $0 == " " }
            return try XCTUnwrap(Double(rest.prefix { !$0.isWhitespace }), String(rest.prefix(40)))
        }
        let tail = text[summary.upperBound...]
        var frames: [(Double, Double, Double)] = []
        for line in text[..<summary.lowerBound].split(separator: "\n") where line.contains(" t: ") {
            frames.append(
                (
                    try number(after: " t:", in: line), try number(after: " M:", in: line),
                    try number(after: " S:", in: line)
                ))
        }
        return Reading(
            integrated: try number(after: "I:", in: tail), range: try number(after: "LRA:", in: tail),
            truePeak: try number(after: "Peak:", in: tail), frames: frames)
    }

    /// The interleaved stereo samples of a sound file, as ffmpeg decodes them.
    static func samples(_ path: String) throws -> [Float] {
        let data = try TestSupport.run(["ffmpeg", "-v", "error", "-i", path, "-f", "f32le", "-ac", "2", "-"])
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
}
