import Courier
import CourierTestServer
import Foundation
import Testing

/// The loopback server's echo, decoded.
public typealias Echo = EchoResponse

/// A call to the echo route (or any route answering with an echo).
public struct EchoEndpoint: Endpoint {
    /// The decoded echo.
    public typealias Output = Echo
    /// The route, `echo` by default.
    public var path = "echo"
    /// The method, `GET` by default.
    public var method: HTTPRequest.Method = .get
    /// Query items, encoded by Courier.
    public var query: [QueryItem] = []
    /// Headers of the call.
    public var headers: RequestHeaders = [:]
    /// The request body, if any.
    public var body: RequestBody?
    /// The call's deadline; the client's when `nil`.
    public var timeout: Duration?

    /// Describes an echo call.
    public init(
        path: String = "echo", method: HTTPRequest.Method = .get, query: [QueryItem] = [], headers: RequestHeaders = [:],
        body: RequestBody? = nil, timeout: Duration? = nil
    ) {
        self.path = path
        self.method = method
        self.query = query
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// A call whose output is the raw body.
public struct RawEndpoint: Endpoint {
    /// The raw body.
    public typealias Output = Data
    /// The route.
    public var path: String
    /// The method, `GET` by default.
    public var method: HTTPRequest.Method = .get
    /// Query items, encoded by Courier.
    public var query: [QueryItem] = []
    /// Headers of the call.
    public var headers: RequestHeaders = [:]
    /// The request body, if any.
    public var body: RequestBody?
    /// The call's deadline; the client's when `nil`.
    public var timeout: Duration?
    /// Which statuses succeed, 2xx by default.
    public var statusValidation: StatusValidation = .successful
    /// Where the call reports its progress; none by default.
    public var progress: ProgressReporter?

    /// Describes a raw call.
    public init(
        path: String, method: HTTPRequest.Method = .get, query: [QueryItem] = [], headers: RequestHeaders = [:],
        body: RequestBody? = nil, timeout: Duration? = nil, statusValidation: StatusValidation = .successful
    ) {
        self.path = path
        self.method = method
        self.query = query
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.statusValidation = statusValidation
    }
}

/// Runs `body` with a fresh loopback server speaking `mode` (HTTP/1.1 by default), and shuts it
/// down afterwards.
public func withServer<T>(mode: TestServer.Mode = .http1, _ body: (TestServer) async throws -> T) async throws -> T {
    let server = try await TestServer.start(mode: mode)
    do {
        let result = try await body(server)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}

/// Application middleware that counts the response heads that reached the client (the body may
/// still be streaming), so a case can act once a call is receiving.
public final class HeadArrivals: Middleware {
    private let arrived = Locked(0)

    /// Creates the counter.
    public init() {}

    /// How many heads have arrived.
    public var count: Int { arrived.withLock { $0 } }

    /// Passes the call on and counts its head.
    public func intercept(
        _ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next
    ) async throws -> TransportResponse {
        let response = try await next(request, body, context)
        arrived.withLock { $0 += 1 }
        return response
    }
}
