import Foundation

@testable import GraphHost

/// The live path judged against a peer: graphhost's sink and the peer's sink (`HeadlessPipeWire.peerSink`, where
/// pw-play plays the same sound) recorded from their monitors in the same seconds, then each recording's intact
/// 100 ms windows counted against the same reference (`SignalMatch.intactWindows`).
struct PeerRecordings {
    let ownPath: String
    let peerPath: String
    private let recorders: [HeadlessPipeWire.Running]

    /// Starts both recordings (the peer's sink must exist); `name` tells the files apart.
    init(_ pw: HeadlessPipeWire, name: String) throws {
        ownPath = TestSupport.directory.appendingPathComponent("\(name)-monitor.wav").path
        peerPath = TestSupport.directory.appendingPathComponent("\(name)-peer-monitor.wav").path
        recorders = [try pw.record(to: ownPath), try pw.record(to: peerPath, sink: HeadlessPipeWire.peerSink)]
    }

    /// Stops both recordings and counts their intact windows against `reference` (interleaved stereo).
    func finish(reference: [Float]) throws -> (own: (intact: Int, total: Int), peer: (intact: Int, total: Int)) {
        for recorder in recorders {
            recorder.interrupt()
            _ = recorder.wait()
        }
        let mono = SignalMatch.mono(reference)
        return (
            SignalMatch.intactWindows(
                recording: SignalMatch.mono(try SoundFile(path: ownPath).samples), reference: mono),
            SignalMatch.intactWindows(
                recording: SignalMatch.mono(try SoundFile(path: peerPath).samples), reference: mono)
        )
    }

    /// What pw-play lost: the peer's broken windows, for `PeerJudgement`.
    static func loss(_ peer: (intact: Int, total: Int)) -> PeerLoss {
        PeerLoss(peer: "pw-play", lost: peer.total - peer.intact, of: peer.total, what: "100 ms windows broken")
    }
}
