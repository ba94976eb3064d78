import CCurl
import Courier
import CourierConformance
import CourierTestServer
import Foundation
import Logging
import Testing

@testable import CourierCurl

/// libcurl before 8.0 fails a fraction of HTTP/2 transfers on healthy connections (curl issue
/// 10634). The engine sends such a request again when that is safe; these tests pin when it is.
@Suite("CurlTransport: resending after libcurl's spurious HTTP/2 failures", .timeLimit(.minutes(2)))
struct CurlResendTests {
    /// Runs `check` on a transfer as the engine holds it once started (on a handle, waiting for
    /// its head), without running it; `prepare` moves it on first. Stops it afterwards.
    static func withTransfer(
        _ method: HTTPRequest.Method = .get, body: RequestBody? = nil, version: HTTPVersionPreference = .http2, engine: CurlEngine,
        prepare: (CurlTransfer, StateHarness) -> Void = { _, _ in }, _ check: (CurlTransfer) -> Void
    ) async throws {
        let request = HTTPRequest(method: method, scheme: "https", authority: "127.0.0.1:1", path: "/x")
        let context = RequestContext(requestID: "resend", deadline: .now + .seconds(5), recorder: TransferRecorder(transport: "curl"))
        let transfer = CurlTransfer(request: request, body: body, context: context, version: version, engine: engine)
        let harness = StateHarness()
        let attempt = try StateHarness.attempt(body)
        _ = await StateHarness.call { waiter in
            guard harness.begin(&transfer.state, waiter, attempt) else { return }
            prepare(transfer, harness)
            check(transfer)
            _ = harness.settle(transfer.state.stop(.cancelled(phase: .receiving)))
        }
    }

    @Test("an idempotent HTTP/2 request that received nothing is resent after a framing, stream or connection failure, at most twice")
    func resendPolicy() async throws {
        let engine = try CurlEngine(configuration: .init())
        let spurious = [CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING]
        for code in spurious {
            for method in [HTTPRequest.Method.get, .head, .options, .delete, .put] {
                try await Self.withTransfer(method, engine: engine) { transfer in
                    #expect(transfer.mayResend(after: code, spuriousFailures: true), "\(method) after \(code)")
                    #expect(!transfer.mayResend(after: code, spuriousFailures: false), "a libcurl without the bug resends nothing")
                    #expect(transfer.mayResend(after: code) == CurlRuntime.hasRandomHTTP2FramingErrors, "the linked libcurl decides")
                }
            }
        }
        try await Self.withTransfer(engine: engine) { transfer in
            transfer.http2Resends = CurlTransfer.maxHTTP2Resends - 1
            #expect(transfer.mayResend(after: CURLE_HTTP2, spuriousFailures: true))
            transfer.http2Resends = CurlTransfer.maxHTTP2Resends
            #expect(!transfer.mayResend(after: CURLE_HTTP2, spuriousFailures: true))
        }
        await engine.shutdown()
    }

    @Test("nothing is resent that the server may have acted on or the caller may have seen")
    func noUnsafeResend() async throws {
        let engine = try CurlEngine(configuration: .init())
        func resends(_ transfer: CurlTransfer, _ code: CURLcode = CURLE_HTTP2_STREAM) -> Bool {
            transfer.mayResend(after: code, spuriousFailures: true)
        }
        // Each case beside its control: the same transfer without the one difference is resent.
        try await Self.withTransfer(engine: engine) { #expect(resends($0), "the control: a GET over HTTP/2 that received nothing") }
        try await Self.withTransfer(.post, engine: engine) { #expect(!resends($0), "POST is not idempotent") }
        try await Self.withTransfer(.patch, engine: engine) { #expect(!resends($0), "PATCH is not idempotent") }
        try await Self.withTransfer(.put, body: .data(Data("x".utf8)), engine: engine) { #expect(!resends($0), "a body") }
        try await Self.withTransfer(version: .http1_1, engine: engine) { #expect(!resends($0), "HTTP/1.1 has no such bug") }
        try await Self.withTransfer(engine: engine) { #expect(!resends($0, CURLE_OPERATION_TIMEDOUT), "a timeout is real") }
        try await Self.withTransfer(engine: engine) { #expect(!resends($0, CURLE_COULDNT_CONNECT), "a refused connect is real") }
        try await Self.withTransfer(
            engine: engine,
            prepare: { transfer, _ in transfer.state.withAttempt { $0.failure = .responseTooLarge(limit: 1, announced: nil) } }
        ) { #expect(!resends($0), "Courier's own abort is no spurious failure") }
        try await Self.withTransfer(
            engine: engine,
            prepare: { transfer, harness in
                _ = transfer.state.headArrived(HTTPResponse(status: .ok))
                _ = harness.settle(transfer.state.flush(makeBuffer: harness.buffer))
            }
        ) { #expect(!resends($0), "the caller has the head and reads the body") }
        try await Self.withTransfer(engine: engine, prepare: { transfer, _ in _ = transfer.state.headArrived(HTTPResponse(status: .ok)) }) {
            #expect(resends($0), "a head not handed over yet is dropped with the rest")
        }
        await engine.shutdown()
    }

    @Test("1,536 calls over 64 HTTP/2 streams (TLS) all succeed, even with libcurl's spurious failures")
    func http2UnderLoad() async throws {
        try await withServer(mode: .tls) { server in
            var settings = trustingTestCA()
            settings.httpVersion = .http2
            let resentLines = ResendCounter()
            let (client, transport) = try curlClient(server, transport: settings) {
                $0.logger = Logger(label: "resend", factory: { _ in resentLines })
            }
            let failures = await withTaskGroup(of: [String].self) { group in
                for worker in 0..<64 {
                    group.addTask {
                        var failures: [String] = []
                        for call in 0..<24 {
                            do {
                                let response = try await client.response(for: RawEndpoint(path: "bytes/100"))
                                if response.value.count != 100 { failures.append("\(worker)-\(call): \(response.value.count) bytes") }
                            } catch {
                                failures.append("\(worker)-\(call): \(error)")
                            }
                        }
                        return failures
                    }
                }
                return await group.reduce(into: []) { $0 += $1 }
            }
            #expect(failures.isEmpty, "\(failures.count) failed, first: \(failures.prefix(3))")
            if !CurlRuntime.hasRandomHTTP2FramingErrors { #expect(transport.statistics.http2Resends == 0) }
            // Every resend is logged at debug with its call's request id, and nothing else is.
            #expect(resentLines.counts.resent == transport.statistics.http2Resends)
            #expect(resentLines.counts.withoutID == 0)
            await client.shutdown()
        }
    }
}

/// A log handler at `debug` that counts the curl transport's resend lines. A value, like real
/// handlers: each call's logger carries its own metadata, and copies share the counts.
private struct ResendCounter: LogHandler {
    private let tally = Locked<(resent: Int, withoutID: Int)>((0, 0))
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug

    var counts: (resent: Int, withoutID: Int) { tally.withLock { $0 } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.message.description == "courier.curl.http2_resent" else { return }
        let hasID = metadata["courier.request_id"] != nil
        tally.withLock { tally in
            tally.resent += 1
            if !hasID { tally.withoutID += 1 }
        }
    }
}
