import Foundation
import GraphHost
import XCTest

/// The README's screenshots of the page (scripts/screenshots) carry the version of the page they show, read back
/// from the page, in a tEXt chunk: a page changed without taking them again fails here.
final class PageScreenshotTests: XCTestCase {
    static let screenshots = [("page-desktop.png", 1280), ("page-phone.png", 390)]

    func testTheScreenshotsShowTheCurrentPage() throws {
        for (name, width) in Self.screenshots {
            let path = TestSupport.root.appendingPathComponent("docs/\(name)")
            let png = try PNGChunks(Data(contentsOf: path))
            let shown = try XCTUnwrap(
                png.text["graphhost-page-version"],
                "docs/\(name) has no graphhost-page-version: run scripts/screenshots")
            XCTAssertEqual(
                shown, WebPage.version,
                "docs/\(name) shows page \(shown), the page is \(WebPage.version) now: run scripts/screenshots")
            XCTAssertEqual(png.width, width, "docs/\(name) is \(png.width) px wide")
            XCTAssertGreaterThan(png.height, 600, "docs/\(name) is \(png.height) px high: not the full page")
        }
    }
}
