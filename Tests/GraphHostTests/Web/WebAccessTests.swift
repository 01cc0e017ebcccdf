import Foundation
import XCTest

@testable import GraphHost

/// Who the page's server lets in (`WebAccess`), and how the page's messages become typed commands (`WebRequest`).
final class WebAccessTests: XCTestCase {
    let access = WebAccess(token: "0123456789abcdef0123456789abcdef", bindAddress: "127.0.0.1", port: 8080)

    func refusal(host: String?, origin: String? = nil, query: String? = nil, cookie: String? = nil) -> Int? {
        do throws(WebAccess.Refusal) {
            try access.check(host: host, origin: origin, queryToken: query, cookie: cookie)
            return nil
        } catch {
            return error.status
        }
    }

    /// The token is 128 random bits; comparing it takes the same steps wherever a guess first differs.
    func testTokensAreRandomAndComparedWhole() {
        let tokens = Set((0..<50).map { _ in WebAccess.randomToken() })
        XCTAssertEqual(tokens.count, 50)
        XCTAssertTrue(tokens.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
        XCTAssertTrue(WebAccess.constantTimeEqual("abc", "abc"))
        XCTAssertFalse(WebAccess.constantTimeEqual("abc", "abd"))
        XCTAssertFalse(WebAccess.constantTimeEqual("abc", "abcd"))
        XCTAssertFalse(WebAccess.constantTimeEqual("", "a"))
    }

    /// A request needs the token (URL or cookie), a Host naming this server, and no foreign Origin.
    func testRequestsNeedTheTokenThisHostAndThisOrigin() {
        let token = access.token
        let cookie = "theme=dark; \(WebAccess.cookieName)=\(token)"
        XCTAssertNil(refusal(host: "127.0.0.1:8080", query: token))
        XCTAssertNil(refusal(host: "localhost:8080", cookie: cookie))
        XCTAssertNil(refusal(host: "127.0.0.1:8080", origin: "http://127.0.0.1:8080", cookie: cookie))
        XCTAssertNil(refusal(host: "[::1]:8080", origin: "http://localhost:8080", cookie: cookie))
        XCTAssertEqual(refusal(host: "127.0.0.1:8080"), 403, "no token")
        XCTAssertEqual(refusal(host: "127.0.0.1:8080", query: token + "0"), 403, "a longer token")
        let changed = token.dropLast() + (token.hasSuffix("0") ? "1" : "0")
        XCTAssertEqual(
            refusal(host: "127.0.0.1:8080", cookie: "\(WebAccess.cookieName)=\(changed)"), 403, "last changed")
        XCTAssertEqual(refusal(host: "attacker.example:8080", cookie: cookie), 421, "DNS rebinding")
        XCTAssertEqual(refusal(host: "127.0.0.1:9090", cookie: cookie), 421, "another port")
        XCTAssertEqual(refusal(host: nil, cookie: cookie), 421)
        XCTAssertEqual(refusal(host: "127.0.0.1:8080", origin: "http://attacker.example", cookie: cookie), 403)
        XCTAssertEqual(refusal(host: "127.0.0.1:8080", origin: "https://127.0.0.1:8080", cookie: cookie), 403)
        XCTAssertEqual(refusal(host: "127.0.0.1:8080", origin: "http://127.0.0.1:9090", cookie: cookie), 403)
        XCTAssertEqual(refusal(host: "127.0.0.1:8080", origin: "null", cookie: cookie), 403)
        XCTAssertTrue(access.cookie.contains("HttpOnly") && access.cookie.contains("SameSite=Strict"))
    }

    /// Bound to every interface, the machine's own addresses are this server too; a name it does not have is not.
    func testAServerOnEveryInterfaceKnowsItsAddresses() throws {
        let wide = WebAccess(token: "t", bindAddress: "0.0.0.0", port: 80)
        XCTAssertTrue(wide.isOwnHost("127.0.0.1"))
        XCTAssertTrue(wide.isOwnHost("localhost:80"))
        XCTAssertFalse(wide.isOwnHost("attacker.example"))
        XCTAssertTrue(wide.isOwnOrigin("http://localhost"))
        XCTAssertEqual(WebServer.parseAddress("8080")?.host, "127.0.0.1")
        XCTAssertEqual(WebServer.parseAddress("0.0.0.0:0")?.port, 0)
        XCTAssertEqual(WebServer.parseAddress("[::1]:80")?.host, "::1")
        XCTAssertNil(WebServer.parseAddress("70000"))
        XCTAssertNil(WebServer.parseAddress("x:y"))
    }

    /// Each op becomes the typed command the other surfaces send; a malformed message is refused with the reason,
    /// keeping its id for the reply.
    func testMessagesBecomeTypedCommands() {
        func decode(_ text: String) -> WebRequest? { try? WebRequest.decode(text).request.get() }
        let band = ParameterID("band.3")
        XCTAssertEqual(
            decode(#"{"op":"set","node":"eq","parameter":"band.3","value":4.5}"#),
            .command(.node(NodeRequest(node: "eq", action: .set(parameter: band, value: 4.5)))))
        XCTAssertEqual(
            decode(#"{"op":"set","node":"p","parameter":"band.0.type","value":"notch"}"#),
            .command(
                .node(NodeRequest(node: "p", action: .choose(parameter: ParameterID("band.0.type"), label: "notch")))))
        XCTAssertEqual(
            decode(#"{"op":"preset","node":"eq","name":"Bass Booster"}"#),
            .command(.node(NodeRequest(node: "eq", action: .preset("Bass Booster")))))
        XCTAssertEqual(
            decode(#"{"op":"bypass","node":"eq","on":true}"#),
            .command(.node(NodeRequest(node: "eq", action: .bypass(true)))))
        XCTAssertEqual(
            decode(#"{"op":"seek","node":"s","seconds":12}"#),
            .command(.node(NodeRequest(node: "s", action: .seek(12)))))
        XCTAssertEqual(decode(#"{"op":"chain","node":"fx","name":"warm"}"#), .command(.chain(node: "fx", name: "warm")))
        XCTAssertEqual(decode(#"{"op":"pause"}"#), .command(.pause))
        XCTAssertEqual(decode(#"{"op":"meter","node":"eq","on":false}"#), .command(.meter(node: "eq", on: false)))
        XCTAssertEqual(decode(#"{"op":"subscribe","feed":"meters","rate":30}"#), .subscribe(.feed(.meters), rate: 30))
        XCTAssertEqual(
            decode(#"{"op":"subscribe","feed":"spectrum","node":"out","rate":30}"#),
            .subscribe(.feed(.spectrum(node: "out")), rate: 30))
        XCTAssertEqual(decode(#"{"op":"unsubscribe","feed":"transport"}"#), .unsubscribe(.transport))
        XCTAssertEqual(decode(#"{"op":"response","node":"eq"}"#), .response(node: "eq"))

        for (text, reason) in [
            ("[1]", "a message must be a JSON object"), ("{}", "'op' must be a string"),
            (#"{"op":"fly"}"#, "unknown op 'fly'"),
            (#"{"op":"set","node":"eq","parameter":"band.3"}"#, "needs 'value'"),
            (#"{"op":"bypass","node":"eq","on":"yes"}"#, "needs 'on', true or false"),
            (#"{"op":"subscribe","feed":"meters","rate":0}"#, "'rate' must be above 0"),
            (#"{"op":"subscribe","feed":"meters","rate":1000}"#, "at most 60"),
            (#"{"op":"subscribe","feed":"colours","rate":1}"#, "unknown feed 'colours'"),
            (#"{"op":"subscribe","feed":"spectrum","rate":1}"#, "needs 'node'"),
        ] {
            guard case .failure(let refusal) = WebRequest.decode(text).request else {
                XCTFail("\(text) was accepted")
                continue
            }
            XCTAssertTrue(refusal.message.contains(reason), "\(text): \(refusal.message)")
        }
        XCTAssertEqual(WebRequest.decode(#"{"id":7,"op":"fly"}"#).id?.numberValue, 7)
    }
}
