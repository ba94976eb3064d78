// swift-format-ignore-file
// (The README's snippets keep their compact, hand-aligned layout.)
import Courier
import Foundation

// What the README's queue example assumes exists.
struct Session: Decodable, Sendable { let token: String }
struct Profile: Decodable, Sendable { let name: String }
struct Login: Endpoint {
    typealias Output = Session
    var path: String { "login" }
}
struct GetProfile: Endpoint {
    typealias Output = Profile
    let token: String
    var path: String { "profile" }
}
struct GetThumbnail: Endpoint {
    typealias Output = Data
    let id: Int
    var path: String { "thumbnails/\(id)" }
}
func show(_ id: Int, _ result: Result<Data, NetworkError>) {}

// README block 4
final class GetImage: BaseAPI<Data>, @unchecked Sendable {
    let id: Int
    let queue: RequestQueue
    init(client: NetworkClient, id: Int, queue: RequestQueue) { self.id = id; self.queue = queue; super.init(client: client) }
    override var path: String { "images/\(id)" }
    override var requestQueue: RequestQueue? { queue }  // an API object can name its own queue
    override var priority: RequestPriority { .low }  // low, normal (default), high
    override var tags: Set<String> { ["page-7"] }  // for images.cancelAll(.tag("page-7"))
}

func queues(client: NetworkClient, ids: [Int], visibleIDs: Set<Int>) async throws {  // (compiled wrapper)
    let images = try RequestQueue(name: "images", limits: .init(maxConcurrent: 8, maxConcurrentPerHost: 4))
    // a default queue for every call of a client: NetworkClient(..., queue: images), or "queue" in the file
    let results = try await Batch(ids.map { GetImage(client: client, id: $0, queue: images) }, queue: images).run()  // input order
    let profile = try await Chain("log in", Login()).then("profile") { GetProfile(token: $0.token) }.run(on: client)
    let thumbnails = try KeyedLoader(client: client, endpoint: { GetThumbnail(id: $0) }) { id, result in show(id, result) }
    thumbnails.setWanted(visibleIDs)  // starts new keys, cancels keys nobody wants, keeps running ones, serves the cache
    // README end
    _ = (results, profile)
}
