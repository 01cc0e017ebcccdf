import FoundationEssentials
import Glibc

/// `render --meters FILE.csv`: the levels of every meter that is on, a row per node and channel at each interval:
/// `seconds,node,channel,peak_dbfs,held_peak_dbfs,rms_dbfs,clips` (silence as `-inf`; channels count from 1).
public final class MeterCSVWriter {
    static let header = "seconds,node,channel,peak_dbfs,held_peak_dbfs,rms_dbfs,clips\n"
    public let path: String
    private var text = header

    public init(path: String) { self.path = path }

    /// Adds the rows of `meters` read at `seconds`.
    public func add(_ meters: [RunStatus.Meter], seconds: Double) {
        let time = Format.printf("%.3f", seconds)
        for meter in meters {
            for (c, level) in meter.channels.enumerated() {
                let values = [level.peak, level.heldPeak, level.rms].map { RunStatus.Level.csv($0) }
                text += "\(time),\(meter.node),\(c + 1),\(values.joined(separator: ",")),\(level.clips)\n"
            }
        }
    }

    /// Writes the file (replacing one that is there).
    public func write() throws {
        do { try Data(text.utf8).write(to: URL(fileURLWithPath: path)) } catch {
            throw MeterCSVError(path: path, reason: "\(error)")
        }
    }
}

/// The meter CSV could not be written.
struct MeterCSVError: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "cannot write the meter CSV \(path): \(reason)" }
}

extension RunStatus.Level {
    /// dBFS with two decimals, or `-inf`.
    static func csv(_ dBFS: Double) -> String { dBFS.isFinite ? Format.printf("%.2f", dBFS) : "-inf" }
}
