import Courier
import CourierTestServer
import Foundation
import Testing

extension ConformanceCases {
    /// Texts that must survive a round trip as a path segment and as a query name and value:
    /// spaces, reserved characters, percent signs, non-ASCII letters and an emoji.
    public static let encodingSamples = [
        "plain", "a b", "a+b", "100%", "x?y#z", "k=v&w", "é ü ß", "日本", "😀", "semi;colon", "tilde~dash-under_dot.", "'quote\"",
    ]

    /// A text goes out as a path segment, a query name and a query value, and the server decodes
    /// each back to the same text.
    public static func encodingRoundTrip(_ transport: ConformanceTransport, text: String) async throws {
        try await withServer(mode: transport.serverMode) { server in
            let client = try transport.makeClient(server)
            let echo = try await client.send(EchoEndpoint(path: "echo/\(text)", query: [QueryItem(text, text), QueryItem("n", "1")]))
            #expect(echo.path.removingPercentEncoding == "/echo/\(text)", "raw path \(echo.path)")
            #expect(echo.query == [[text, text], ["n", "1"]], "raw query \(echo.rawQuery)")
            #expect(!echo.rawQuery.contains(" "), "the query must be percent-encoded on the wire")
            await client.shutdown()
        }
    }
}
