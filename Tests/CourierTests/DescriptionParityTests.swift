import CourierMock
import Foundation
import HTTPTypes
import Logging
import Synchronization
import Testing

@testable import Courier

/// One description: an API object and an ``Endpoint`` value reach the call through one path
/// (``Call``), so every field an endpoint can set reaches the call from a ``BaseAPI`` too.
@Suite("One description for API objects and endpoints")
struct DescriptionParityTests {
    /// Every requirement of `Endpoint` has an overridable property on `BaseAPI`. Without one, a
    /// subclass's property of that name is never read (the protocol's default answers), which is
    /// how `endpointName` was once silently ignored.
    @Test("every Endpoint requirement is an open property of BaseAPI")
    func everyRequirementIsOverridable() throws {
        let api = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/Courier/API")
        let endpoint = try String(contentsOf: api.appendingPathComponent("Endpoint.swift"), encoding: .utf8)
        let baseAPI = try String(contentsOf: api.appendingPathComponent("BaseAPI.swift"), encoding: .utf8)
        let protocolBody =
            try #require(endpoint.components(separatedBy: "public protocol Endpoint").dropFirst().first)
            .components(separatedBy: "\n}\n").first ?? ""
        let required = Self.names(in: protocolBody, after: "    var ")
        let overridable = Self.names(in: baseAPI, after: "    open var ")
        #expect(required.count >= 19)
        #expect(required.subtracting(overridable).isEmpty, "BaseAPI lacks open properties for \(required.subtracting(overridable))")
        // And the call reads every one: in Call.init (and the request builder it calls), or, for
        // the decoder, where each entry point hands it to `perform`.
        let sources = api.deletingLastPathComponent()
        let readers = try ["Client/Call.swift", "Request/RequestBuilder.swift"].map {
            try String(contentsOf: sources.appendingPathComponent($0), encoding: .utf8)
        }.joined()
        let read = Set(required.filter { readers.contains("endpoint.\($0)") })
        #expect(required.subtracting(read) == ["decoder"], "Call.init does not read \(required.subtracting(read).subtracting(["decoder"]))")
    }

    /// An API object and a value that set every field alike build the same call, field by field,
    /// and each field differs from the default: a new field of ``CallSettings`` is checked here
    /// without a change to this test (the fixtures must then set it, which needs BaseAPI's property).
    @Test("an API object and an endpoint value that set every field build the same call")
    func sameCall() async throws {
        let queue = try RequestQueue(name: "parity")
        let client = try makeClient(MockTransport())
        let fromValue = Call(FullEndpoint(queue: queue), on: client)
        let fromObject = Call(FullAPI(client: client, queue: queue), on: client)
        let plain = Call(PlainEndpoint(), on: client)

        let settings = Mirror(reflecting: fromValue.settings).children.map { ($0.label ?? "?", $0.value) }
        let objectSettings = Dictionary(
            uniqueKeysWithValues: Mirror(reflecting: fromObject.settings).children.map { ($0.label ?? "?", Self.text($0.value)) })
        let plainSettings = Dictionary(
            uniqueKeysWithValues: Mirror(reflecting: plain.settings).children.map { ($0.label ?? "?", Self.text($0.value)) })
        #expect(settings.count >= 4)
        // Not the endpoint's own: its type, which differs by construction.
        for (label, value) in settings where label != "apiType" {
            #expect(objectSettings[label] == Self.text(value), "\(label) differs between the API object and the endpoint")
            #expect(plainSettings[label] != Self.text(value), "\(label) is not set by the fixtures")
        }
        // What reaches the chain in the context: each field as the endpoint set it.
        for call in [fromValue, fromObject] {
            let context = call.context
            #expect(context.team == "payments")
            #expect(context.endpointName == "items.put")
            #expect(context.httpVersion == .http2)
            #expect(context.cachePolicy == .reloadIgnoringCache)
            #expect(context.maxResponseBytes == 4096)
            #expect(call.start.duration(to: context.deadlineMoment) == .seconds(7))
            #expect(call.logger.label == "parity")
            #expect(context.placement?.queue === queue)
            #expect(context.placement?.priority == .high)
            #expect(context.placement?.deduplication == .never)
        }
        #expect(plain.context.team == nil && plain.context.endpointName == nil && plain.context.placement == nil)

        #expect(fromValue.buildFailure == nil && fromObject.buildFailure == nil)
        #expect(fromValue.request == fromObject.request)
        #expect(fromValue.request.url?.absoluteString == "https://other.test/v2/items/7?q=1")
        #expect(fromValue.request.method == .put)
        #expect(fromValue.request.headerFields[HTTPField.Name("X-Own")!] == "yes")
        #expect(fromValue.context.ownHeaderNames == fromObject.context.ownHeaderNames)
        #expect(fromValue.context.ownHeaderNames.contains(HTTPField.Name("X-Own")!))
        #expect(fromValue.body?.bufferedData == fromObject.body?.bufferedData)
        #expect(fromValue.body?.bufferedData == parityBody)

        // The decoders are the endpoints': both turn the body into the same value.
        let head = HTTPResponse(status: .ok)
        #expect(try FullEndpoint(queue: queue).decoder.decode(Data("x".utf8), head, json: JSONDecoder()) == "decoded x")
        #expect(try FullAPI(client: client, queue: queue).decoder.decode(Data("x".utf8), head, json: JSONDecoder()) == "decoded x")
    }

    /// The field that was lost: an API object's `endpointName` reaches middleware and observers.
    @Test("an API object's endpoint name reaches the context and the observers")
    func endpointNameFromAPIObject() async throws {
        let seen = NameRecorder()
        let mock = MockTransport()
        mock.stub(.get, "named", .status(200, body: Data("x".utf8)))
        let client = try makeClient(mock, middleware: [seen])
        _ = try await NamedAPI(client: client).response()
        #expect(seen.names == ["named-operation"])
    }

    private static func names(in text: String, after prefix: String) -> Set<String> {
        Set(
            text.components(separatedBy: "\n").compactMap { line -> String? in
                guard line.hasPrefix(prefix) else { return nil }
                return line.dropFirst(prefix.count).prefix { $0.isLetter || $0.isNumber }.description
            })
    }

    /// A field's value as text: closures are compared by what they answer.
    private static func text(_ value: Any) -> String {
        switch value {
        case let validation as StatusValidation: "accepts 299: \(validation.isAcceptable(299)), 418: \(validation.isAcceptable(418))"
        case let decoder as ErrorBodyDecoder: "decodes to \(String(describing: decoder.decode(Data("e".utf8), JSONDecoder())))"
        case let decoder as ErrorBodyDecoder?: "decodes to \(String(describing: decoder?.decode(Data("e".utf8), JSONDecoder())))"
        case let placement as QueuePlacement?:
            placement.map { "\($0.queue.name) \($0.priority) \($0.deduplication) \($0.onStart == nil)" } ?? "none"
        case let membership as CallMembership: "\(membership.tags.sorted()) \(String(describing: membership.team))"
        default: String(describing: value)
        }
    }
}

private let parityBody = Data("{\"a\":1}".utf8)

private struct PlainEndpoint: Endpoint {
    typealias Output = String
    var path: String { "items/7" }
}

private struct FullEndpoint: Endpoint {
    typealias Output = String
    let queue: RequestQueue
    var baseURL: String? { "https://other.test/v2" }
    var path: String { "items/7" }
    var method: HTTPRequest.Method { .put }
    var query: [QueryItem] { [QueryItem("q", "1")] }
    var headers: RequestHeaders { ["X-Own": "yes"] }
    var body: RequestBody? { .data(parityBody, contentType: "application/json") }
    var team: String? { "payments" }
    var logger: Logger? { Logger(label: "parity") }
    var timeout: Duration? { .seconds(7) }
    var httpVersion: HTTPVersionPreference? { .http2 }
    var cachePolicy: CachePolicy? { .reloadIgnoringCache }
    var statusValidation: StatusValidation { .any }
    var decoder: ResponseDecoder<String> { ResponseDecoder { data, _ in "decoded " + String(decoding: data, as: UTF8.self) } }
    var errorDecoder: ErrorBodyDecoder? { ErrorBodyDecoder { data in "error " + String(decoding: data, as: UTF8.self) } }
    var requestQueue: RequestQueue? { queue }
    var priority: RequestPriority { .high }
    var tags: Set<String> { ["nightly"] }
    var deduplication: Deduplication { .never }
    var endpointName: String? { "items.put" }
    var maxResponseBytes: Int? { 4096 }
}

private final class FullAPI: BaseAPI<String>, @unchecked Sendable {
    let queue: RequestQueue
    init(client: NetworkClient, queue: RequestQueue) {
        self.queue = queue
        super.init(client: client)
    }
    override var baseURL: String? { "https://other.test/v2" }
    override var path: String { "items/7" }
    override var method: HTTPRequest.Method { .put }
    override var query: [QueryItem] { [QueryItem("q", "1")] }
    override var headers: RequestHeaders { ["X-Own": "yes"] }
    override var body: RequestBody? { .data(parityBody, contentType: "application/json") }
    override var team: String? { "payments" }
    override var logger: Logger? { Logger(label: "parity") }
    override var timeout: Duration? { .seconds(7) }
    override var httpVersion: HTTPVersionPreference? { .http2 }
    override var cachePolicy: CachePolicy? { .reloadIgnoringCache }
    override var statusValidation: StatusValidation { .any }
    override var decoder: ResponseDecoder<String> { ResponseDecoder { data, _ in "decoded " + String(decoding: data, as: UTF8.self) } }
    override var errorDecoder: ErrorBodyDecoder? { ErrorBodyDecoder { data in "error " + String(decoding: data, as: UTF8.self) } }
    override var requestQueue: RequestQueue? { queue }
    override var priority: RequestPriority { .high }
    override var tags: Set<String> { ["nightly"] }
    override var deduplication: Deduplication { .never }
    override var endpointName: String? { "items.put" }
    override var maxResponseBytes: Int? { 4096 }
}

private final class NamedAPI: BaseAPI<String>, @unchecked Sendable {
    override var path: String { "named" }
    override var endpointName: String? { "named-operation" }
}

/// Records the endpoint name each call's context carries.
private final class NameRecorder: Middleware, Sendable {
    private let seen = Mutex<[String?]>([])
    var names: [String?] { seen.withLock { $0 } }

    func intercept(_ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: Middleware.Next) async throws
        -> TransportResponse
    {
        seen.withLock { $0.append(context.endpointName) }
        return try await next(request, body, context)
    }
}
