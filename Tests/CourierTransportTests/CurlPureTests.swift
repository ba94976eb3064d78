import CCurl
import Courier
import CourierConformance
import Testing

@testable import CourierCurl

@Suite("CurlTransport's pure parts: head parsing, error mapping")
struct CurlPureTests {
    @Test("interim 1xx heads are skipped, repeated names kept in order, folded lines joined")
    func headParsing() {
        var head = CurlResponseHead()
        let lines = [
            "HTTP/1.1 100 Continue\r\n", "\r\n",
            "HTTP/1.1 200 OK\r\n", "Set-Cookie: a=1\r\n", "X-Long: first\r\n", "\t second\r\n", "set-cookie: b=2\r\n", "\r\n",
        ]
        var results: [CurlResponseHead.Line] = []
        for line in lines { results.append(head.take(line)) }
        #expect(results[1] == .interimEnd)
        #expect(results.last == .finalEnd(status: 200))
        #expect(!results.contains { if case .invalid = $0 { true } else { false } })
        let response = head.response
        #expect(response?.status.code == 200)
        #expect(response?.status.reasonPhrase == "OK")
        #expect(response?.headerFields[values: .setCookie] == ["a=1", "b=2"])
        #expect(response?.headerFields[HTTPField.Name("x-long")!] == "first second")
    }

    @Test(
        "a malformed header line stops the head as invalid",
        arguments: [
            ("X-A: one\rtwo\r\n", "bare CR"), ("X-A : one\r\n", "whitespace before its colon"),
            ("X-A\t: one\r\n", "whitespace before its colon"),
            ("X-A: o\u{0}ne\r\n", "NUL"), ("X-A: o\u{1}ne\r\n", "control character"), ("X-A: o\u{7F}ne\r\n", "control character"),
            ("X(A): one\r\n", "may not have"), (": one\r\n", "empty field name"), ("not a header\r\n", "no colon"),
            ("X-A: one\r\r\n", "bare CR"), ("\t folded\r\n", "folded"),
        ]
    )
    func malformedLines(line: String, reason: String) {
        var head = CurlResponseHead()
        #expect(head.take("HTTP/1.1 200 OK\r\n") == .partial)
        guard case .invalid(let message) = head.take(line) else {
            Issue.record("\(line.debugDescription) was accepted")
            return
        }
        #expect(message.contains(reason), "\(message)")
    }

    @Test("a header line before any status line is invalid")
    func lineBeforeStatus() {
        var head = CurlResponseHead()
        guard case .invalid = head.take("X-A: one\r\n") else {
            Issue.record("accepted")
            return
        }
    }

    @Test("the limits: fields, bytes and interim responses each stop the head at the first line past them")
    func limits() {
        let limits = ResponseHeadLimits(maxFields: 3, maxBytes: 1024, maxInterimResponses: 2)
        var head = CurlResponseHead(limits: limits)
        _ = head.take("HTTP/1.1 200 OK\r\n")
        for index in 0..<3 { #expect(head.take("X-\(index): v\r\n") == .partial) }
        #expect(head.take("X-3: v\r\n") == .invalid("the response head has more than 3 fields"))

        var big = CurlResponseHead(limits: limits)
        _ = big.take("HTTP/1.1 200 OK\r\n")
        #expect(big.take("X-A: " + String(repeating: "a", count: 1000) + "\r\n") == .partial)
        #expect(
            big.take("X-B: " + String(repeating: "b", count: 100) + "\r\n")
                == .invalid("the response head has more than 1024 bytes of fields"))

        var interim = CurlResponseHead(limits: limits)
        for _ in 0..<2 {
            _ = interim.take("HTTP/1.1 103 Early Hints\r\n")
            #expect(interim.take("\r\n") == .interimEnd)
        }
        _ = interim.take("HTTP/1.1 103 Early Hints\r\n")
        #expect(interim.take("\r\n") == .invalid("the response has more than 2 interim (1xx) responses"))
    }

    @Test("an HTTP/2 status line without a reason parses")
    func http2StatusLine() {
        var head = CurlResponseHead()
        _ = head.take("HTTP/2 204 \r\n")
        #expect(head.take("\r\n") == .finalEnd(status: 204))
        #expect(head.response?.status.code == 204)
    }

    @Test(
        "status lines parse on bytes; malformed ones leave no status and are invalid",
        arguments: [
            ("HTTP/1.1 200 OK\r\n", 200, "OK"), ("HTTP/1.0 404 Not Found\r\n", 404, "Not Found"), ("HTTP/2 204\r\n", 204, ""),
            ("HTTP/1.1 503  Slow Down \r\n", 503, "Slow Down"), ("HTTP/1.1 2000 Big\r\n", nil, ""), ("HTTP/1.1 20 Short\r\n", nil, ""),
            ("HTTP/1.1 abc\r\n", nil, ""), ("HTTP/1.1\r\n", nil, ""), ("HTTP/1.1 20x OK\r\n", nil, ""),
        ] as [(String, Int?, String)]
    )
    func statusLines(line: String, status: Int?, reason: String) {
        var head = CurlResponseHead()
        let result = head.take(line)
        #expect(head.status == status)
        #expect(head.reason == reason)
        #expect(result == (status == nil ? .invalid("the response has a malformed status line") : .partial))
    }

    @Test(
        "libcurl codes map to precise kinds",
        arguments: [
            (CURLE_COULDNT_RESOLVE_HOST, NetworkError.Kind.dnsFailure), (CURLE_COULDNT_CONNECT, .connectFailure),
            (CURLE_OPERATION_TIMEDOUT, .timedOut), (CURLE_PEER_FAILED_VERIFICATION, .tlsFailure),
            (CURLE_SSL_PINNEDPUBKEYNOTMATCH, .tlsFailure), (CURLE_GOT_NOTHING, .connectionClosed), (CURLE_RECV_ERROR, .connectionClosed),
            (CURLE_PARTIAL_FILE, .connectionClosed), (CURLE_WEIRD_SERVER_REPLY, .invalidResponse), (CURLE_HTTP2, .invalidResponse),
            (CURLE_OUT_OF_MEMORY, .transportFailure),
        ])
    func errorKinds(mapping: (code: CURLcode, kind: NetworkError.Kind)) {
        let error = CurlErrorMapping.error(code: mapping.code, message: "", progress: .init())
        #expect(error.kind == mapping.kind)
        #expect(error.nativeCode == .init(domain: "CURLcode", code: Int(mapping.code.rawValue)))
        #expect(error.message.hasPrefix("curl: "))
    }

    @Test("an unsupported protocol is the caller's before the request went out and the server's after it")
    func unsupportedProtocol() {
        let before = CurlErrorMapping.error(code: CURLE_UNSUPPORTED_PROTOCOL, message: "", progress: .init())
        #expect(before.kind == .unsupported)
        #expect(before.phase == .building)
        let after = CurlErrorMapping.error(
            code: CURLE_UNSUPPORTED_PROTOCOL, message: "Received HTTP/0.9 when not allowed",
            progress: .init(nameLookup: 5, connect: 9, preTransfer: 12, firstByte: 20))
        #expect(after.kind == .invalidResponse)
        #expect(after.phase == .awaitingResponse)
    }

    @Test(
        "a TLS alert on a read is a TLS failure; other broken reads stay closed connections",
        arguments: [
            (
                "OpenSSL SSL_read: OpenSSL/3.0.19: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0",
                NetworkError.Kind.tlsFailure
            ),
            ("OpenSSL SSL_read: error:0A000418:SSL routines::tlsv1 alert unknown ca, errno 0", .tlsFailure),
            ("OpenSSL SSL_read: error:0A000126:SSL routines::unexpected eof while reading, errno 0", .connectionClosed),
            ("Recv failure: Connection reset by peer", .connectionClosed),
        ])
    func tlsAlerts(message: String, kind: NetworkError.Kind) {
        let progress = CurlErrorMapping.Progress(nameLookup: 5, connect: 9, tlsHandshake: 11, preTransfer: 12, usesTLS: true)
        for code in [CURLE_RECV_ERROR, CURLE_SEND_ERROR] {
            let error = CurlErrorMapping.error(code: code, message: message, progress: progress)
            #expect(error.kind == kind)
            #expect(error.message == "curl: \(message)")
        }
    }

    @Test("a reused connection that died under a request with a body is a closed connection, not a transport failure")
    func sendFailRewind() {
        let progress = CurlErrorMapping.Progress(nameLookup: 5, connect: 9, preTransfer: 12, reused: true)
        let error = CurlErrorMapping.error(
            code: CURLE_SEND_FAIL_REWIND, message: "Recv failure: Connection reset by peer", progress: progress)
        #expect(error.kind == .connectionClosed)
        #expect(error.phase == .awaitingResponse)
        #expect(error.nativeCode?.code == Int(CURLE_SEND_FAIL_REWIND.rawValue))
    }

    @Test("a timeout names the phase it struck in")
    func timeoutPhases() {
        typealias Progress = CurlErrorMapping.Progress
        let cases: [(Progress, NetworkError.Phase)] = [
            (Progress(), .dns),
            (Progress(nameLookup: 5), .connect),
            (Progress(nameLookup: 5, connect: 9, usesTLS: true), .tls),
            (Progress(nameLookup: 5, connect: 9, preTransfer: 12), .awaitingResponse),
            (Progress(nameLookup: 5, connect: 9, preTransfer: 12, firstByte: 20), .receiving),
        ]
        for (progress, phase) in cases {
            #expect(CurlErrorMapping.error(code: CURLE_OPERATION_TIMEDOUT, message: "x", progress: progress).phase == phase)
        }
    }
}
