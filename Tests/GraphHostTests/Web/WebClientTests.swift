import Dispatch
import Foundation
import Synchronization
import XCTest

@testable import GraphHost

/// What a page is sent after commands from several surfaces at once (`WebClient.event`).
final class WebClientTests: XCTestCase {
    /// Commands performed on four threads at once, in rounds: once every command's event and values have reached the
    /// page, the last values it was sent are the ones the graph plays, never an older reading sent late.
    func testTheLastValuesAPageIsSentAreTheNewest() async throws {
        let path = TestSupport.graph(try TestSupport.eqGraph(preset: "Rock"), name: "web-client")
        let session = try TestSupport.session(path)
        let status = TestSupport.offlineStatus()
        let control = LiveControl(session: session, status: { status.snapshot($0) }, quit: {})
        defer { control.withSession { $0.close() } }
        let client = WebClient(control: control, version: "test", folder: NSTemporaryDirectory())
        defer { client.close() }
        control.addListener { client.event($0) }

        let received = Mutex<[String]>([])
        let arrived = DispatchSemaphore(value: 0)
        let reader = Task {
            for await text in client.outgoing {
                received.withLock { $0.append(text) }
                arrived.signal()
            }
        }
        defer { reader.cancel() }

        let presets = ["Rock", "Jazz", "Piano", "Dance", "Acoustic", "Bass Booster", "Classical", "Deep"]
        let (threads, commandsEach, rounds) = (4, 6, 30)
        var output = [Float](repeating: 0, count: 2 * 256)
        for round in 0..<rounds {
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for k in 0..<commandsEach {
                    let action: NodeCommand =
                        k % 2 == 0
                        ? .bypass((round + thread + k) % 4 < 2)
                        : .preset(presets[(round * 7 + thread * 3 + k) % presets.count])
                    do { _ = try control.perform(.node(NodeRequest(node: "eq", action: action))) } catch {
                        XCTFail("\(action): \(error)")
                    }
                }
            }
            // Each command sends its event and then the values.
            for _ in 0..<(2 * threads * commandsEach) {
                XCTAssertEqual(arrived.wait(timeout: .now() + 30), .success, "round \(round): a message is missing")
            }
            let last = try XCTUnwrap(received.withLock { $0.last { $0.hasPrefix(#"{"nodes""#) } })
            let now = control.withSession { WebGraph.values($0).compact }
            XCTAssertEqual(last, now, "round \(round)")
            received.withLock { $0.removeAll() }
            // The render world takes the round's messages.
            control.withSession { $0.render(frames: 256, interleaved: &output) }
        }
    }
}
