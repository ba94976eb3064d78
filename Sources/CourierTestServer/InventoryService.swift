import CourierTestSupport
import Foundation

/// The loopback implementation of the OpenAPI example's document
/// (`Examples/OpenAPIExample/openapi.yaml`), served under `/inventory`. It keeps no state: item
/// `n` (1 to 100) is named `item-n` and tagged `even` or `odd`; a created item gets id 101.
///
/// | operation | route | answer |
/// | --- | --- | --- |
/// | `listItems` | `GET /inventory/items?limit=&tag=` | the first `limit` (1–100, 10 by default) items with the tag |
/// | `createItem` | `POST /inventory/items` | `201` with the item, or `400` with a problem when `name` is missing or empty |
/// | `getItem` | `GET /inventory/items/{id}` | the item, or `404` with a problem |
/// | `downloadContent` | `GET /inventory/items/{id}/content?bytes=` | `bytes` bytes of ``PatternBody``, streamed |
/// | `uploadContent` | `PUT /inventory/items/{id}/content` | the length and CRC-32 of the body (``PatternBody/Digest``) |
public enum InventoryService {
    /// The path prefix of the service on the loopback server.
    public static let prefix = "/inventory"

    /// One item, as the document describes it.
    public struct Item: Codable, Sendable, Hashable {
        /// The id.
        public var id: Int
        /// The name.
        public var name: String
        /// The tags.
        public var tags: [String]
    }

    struct NewItem: Codable {
        var name: String?
        var tags: [String]?
    }

    struct Problem: Codable {
        var code: String
        var message: String
    }

    /// Item `id`, or `nil` when there is none.
    /// - Parameter id: The id.
    /// - Returns: The item.
    public static func item(_ id: Int) -> Item? {
        guard (1...100).contains(id) else { return nil }
        return Item(id: id, name: "item-\(id)", tags: [id % 2 == 0 ? "even" : "odd"])
    }

    /// The service's answer without a server, for an in-process mock transport: what the loopback
    /// route would send for the request (a streamed download as one body).
    /// - Parameters:
    ///   - method: The request method.
    ///   - path: The path and query, starting with ``prefix``.
    ///   - body: The request body.
    /// - Returns: The status, the headers and the body.
    public static func answer(method: String, path: String, body: Data) -> (status: Int, headers: [(String, String)], body: Data) {
        if digests(method: method, uri: path) {
            var checksum = PatternBody.Checksum()
            checksum.update(body)
            let digest = PatternBody.Digest(bodyLength: body.count, crc32: checksum.value)
            return answer(Route.json(digest))
        }
        let parts = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let segments = parts[0].split(separator: "/").map(String.init)
        let query = parts.count == 2 ? Route.decodeQuery(String(parts[1])) : []
        return answer(resolve(method: method, segments: segments, query: query, body: Array(body)))
    }

    private static func answer(_ action: ServerAction) -> (status: Int, headers: [(String, String)], body: Data) {
        switch action {
        case .respond(let status, let headers, let body): (status, headers, Data(body))
        case .pattern(let count):
            (
                200, [("Content-Type", "application/octet-stream")],
                Data(
                    (0..<(count + PatternBody.blockBytes - 1) / PatternBody.blockBytes).flatMap {
                        PatternBody.block($0, count: Swift.min(PatternBody.blockBytes, count - $0 * PatternBody.blockBytes))
                    })
            )
        default: (500, [], Data("the inventory service has no in-process answer for this request".utf8))
        }
    }

    /// Whether the request is an upload whose body the server only checksums (`PUT …/content`).
    static func digests(method: String, uri: String) -> Bool {
        method == "PUT" && uri.hasPrefix(prefix + "/items/") && uri.split(separator: "?")[0].hasSuffix("/content")
    }

    static func resolve(method: String, segments: [String], query: [[String]], body: [UInt8]) -> ServerAction {
        func queryValue(_ name: String) -> String? { query.first { $0[0] == name }?[1] }
        switch (method, segments.count) {
        case ("GET", 2):
            let limit = Int(queryValue("limit") ?? "10") ?? 0
            guard (1...100).contains(limit) else { return problem(400, "bad_limit", "limit must be 1 to 100") }
            let tag = queryValue("tag")
            let items = (1...100).compactMap(item).filter { tag == nil || $0.tags.contains(tag ?? "") }.prefix(limit)
            return Route.json(Array(items))
        case ("POST", 2):
            guard let new = try? JSONDecoder().decode(NewItem.self, from: Data(body)), let name = new.name, !name.isEmpty else {
                return problem(400, "invalid_item", "an item needs a non-empty name")
            }
            return Route.json(Item(id: 101, name: name, tags: new.tags ?? []), status: 201)
        case ("GET", 3):
            guard let id = Int(segments[2]), let found = item(id) else {
                return problem(404, "not_found", "no item has the id \(segments[2])")
            }
            return Route.json(found)
        case ("GET", 4) where segments[3] == "content":
            guard let count = Int(queryValue("bytes") ?? ""), (0...Route.maxGeneratedBytes).contains(count) else {
                return problem(400, "bad_bytes", "bytes must be 0 to 1 GiB")
            }
            return .pattern(count: count)
        default:
            return problem(404, "no_route", "no inventory operation for \(method) /\(segments.joined(separator: "/"))")
        }
    }

    static func problem(_ status: Int, _ code: String, _ message: String) -> ServerAction {
        Route.json(Problem(code: code, message: message), status: status)
    }
}
