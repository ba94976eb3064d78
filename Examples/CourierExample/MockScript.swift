import Courier
import CourierMock
import Foundation

/// A mock that answers the example's calls the way the loopback server does, so the same
/// program runs with `COURIER_TRANSPORT=mock` and no network at all.
func makeScriptedMock() -> MockTransport {
    let mock = MockTransport()
    mock.stub(
        .get, "/status/404", .status(404, headers: ["Content-Type": "application/json"], body: Data(#"{"error":"no such item"}"#.utf8)))
    mock.stub(.get, "/status/503", .status(503))
    mock.stub(nil, "/echo/**") { request in
        let path = request.path
        let full = request.head.path ?? path
        let rawQuery = full.count > path.count ? String(full.dropFirst(path.count + 1)) : ""
        let echo = EchoSummary(method: request.head.method.rawValue, path: path, rawQuery: rawQuery, bodyLength: request.body?.count ?? 0)
        return .json(echo)
    }
    return mock
}
