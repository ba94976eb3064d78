import Foundation
import Testing

@testable import Courier
@testable import CourierStreaming

@Suite("Server-sent events: the WHATWG event-stream rules")
struct ServerSentEventParserTests {
    /// Feeds `text` whole and byte by byte, and checks both give the same events.
    private func parse(_ text: String, maxEventBytes: Int = 1 << 20) throws -> [ServerSentEvent] {
        var whole = ServerSentEventParser(maxEventBytes: maxEventBytes)
        let once = try whole.feed(Array(text.utf8))
        var split = ServerSentEventParser(maxEventBytes: maxEventBytes)
        var pieces: [ServerSentEvent] = []
        for byte in text.utf8 { pieces += try split.feed([byte]) }
        #expect(once == pieces, "split feeding differs")
        return once
    }

    @Test("data lines join with newlines; event, id; comments and unknown fields ignored; one space after the colon dropped")
    func fields() throws {
        let events = try parse(": comment\nevent: add\ndata: one\ndata:two\ndata:  three\nid: 7\nfoo: bar\n\n")
        #expect(events == [ServerSentEvent(type: "add", data: "one\ntwo\n three", id: "7")])
    }

    @Test("CRLF, LF and CR all end lines, also split across reads")
    func lineEnds() throws {
        let events = try parse("data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\n\n")
        #expect(events.map(\.data) == ["a", "b", "c", "d"])
    }

    @Test("a byte-order mark at the start is dropped; elsewhere it is data")
    func byteOrderMark() throws {
        #expect(try parse("\u{FEFF}data: x\n\n").map(\.data) == ["x"])
        #expect(try parse("data: \u{FEFF}x\n\n").map(\.data) == ["\u{FEFF}x"])
        #expect(try parse("\u{FEFF}\u{FEFF}data: x\n\n").isEmpty, "a second mark makes the first field's name")
    }

    @Test("an event without data is not dispatched; its type does not leak into the next; the id stays")
    func emptyEvents() throws {
        let events = try parse("event: ping\n\nid: 3\n\ndata: x\n\n")
        #expect(events == [ServerSentEvent(type: "message", data: "x", id: "3")])
        // `data` with nothing after it is an empty line of data: dispatched, empty.
        #expect(try parse("data\n\n") == [ServerSentEvent(data: "", id: nil)])
        #expect(try parse("event:\ndata: y\n\n").first?.type == "message")
    }

    @Test("an id with a NUL is ignored; an empty id resets it; retry takes digits only")
    func idAndRetry() throws {
        var parser = ServerSentEventParser()
        let events = try parser.feed(
            Array("id: 1\ndata: a\n\nid: 2\u{0}x\ndata: b\n\nid\ndata: c\n\nretry: 1500\nretry: 2s\nretry: -1\n".utf8))
        #expect(events.map(\.id) == ["1", "1", ""])
        #expect(parser.reconnectionTime == .milliseconds(1500))
        _ = try parser.feed(Array("retry: 99999999999999999999\n".utf8))
        #expect(parser.reconnectionTime == .seconds(86_400))
    }

    @Test("an event cut off by the end of the stream is dropped; a restart keeps the id and the retry")
    func endOfStream() throws {
        var parser = ServerSentEventParser()
        #expect(try parser.feed(Array("id: 3\ndata: whole\n\nid: 4\nretry: 10\ndata: partial".utf8)).count == 1)
        parser.restart()
        // The cut-off event's id never counted: a reconnection asks again from 3.
        #expect(parser.lastEventID == "3" && parser.reconnectionTime == .milliseconds(10))
        #expect(try parser.feed(Array("\u{FEFF}data: fresh\n\n".utf8)) == [ServerSentEvent(data: "fresh", id: "3")])
        // An id with an event without data still counts once that event ends.
        #expect(try parser.feed(Array("id: 9\n\n".utf8)).isEmpty && parser.lastEventID == "9")
    }

    @Test("a line, or an event's data, past the cap fails as invalid_response")
    func caps() throws {
        #expect(throws: NetworkError.self) { try parse("data: " + String(repeating: "x", count: 100) + "\n\n", maxEventBytes: 64) }
        #expect(throws: NetworkError.self) { try parse(String(repeating: "data: 0123456789\n", count: 10), maxEventBytes: 64) }
        #expect(throws: NetworkError.self) { try parse(String(repeating: "x", count: 65), maxEventBytes: 64) }
        let comments = try parse(String(repeating: ": comment that is long\n", count: 50), maxEventBytes: 64)
        #expect(comments.isEmpty)
    }

    @Test("the reconnection wait: the server's retry, capped; the default without one")
    func delay() {
        var policy = EventStreamReconnection()
        policy.maxDelay = .seconds(10)
        #expect(policy.delay(serverSaid: nil) == .seconds(3))
        #expect(policy.delay(serverSaid: .milliseconds(250)) == .milliseconds(250))
        #expect(policy.delay(serverSaid: .seconds(600)) == .seconds(10))
        #expect(policy.delay(serverSaid: .zero) == .milliseconds(100), "retry: 0 still waits the minimum")
        #expect(policy.delay(serverSaid: .seconds(1), emptyInARow: 2) == .seconds(4), "doubles after empty connections")
        #expect(policy.delay(serverSaid: .seconds(1), emptyInARow: 40) == .seconds(10))
        #expect(EventStreamReconnection.reconnects(after: NetworkError(kind: .connectionClosed, phase: .receiving, message: "")))
        #expect(!EventStreamReconnection.reconnects(after: NetworkError(kind: .httpStatus, phase: .validating, message: "")))
    }

    @Test("a reconnection sends Last-Event-ID only when a header can carry it, and asks for the stream")
    func lastEventIDHeader() {
        struct Feed: Endpoint {
            typealias Output = Data
            var path: String { "feed" }
        }
        func sent(_ id: String?) -> String? {
            StreamingEndpoint(base: Feed(), accept: "text/event-stream", setting: ServerSentEvents.lastEventIDHeader(id))
                .headers["Last-Event-ID"]
        }
        #expect(sent("42") == "42")
        for unusable in [nil, "", "42 ", " 42", "a\u{1}b", "a\u{7F}", String(repeating: "x", count: 1025)] {
            #expect(sent(unusable) == nil, "\(String(describing: unusable))")
        }
        let endpoint = StreamingEndpoint(base: Feed(), accept: "text/event-stream")
        #expect(endpoint.headers["Accept"] == "text/event-stream" && endpoint.endpointName?.contains("Feed") == true)
        #expect(endpoint.deduplication == .never)
    }
}
