// swift-format-ignore-file
// (The README's snippets keep their compact, hand-aligned layout.)
import Courier

func queues(client: NetworkClient, ids: [Int]) async throws -> [Result<User, NetworkError>] {
    // README block 5
    let users = try RequestQueue(name: "users", limits: .init(maxConcurrent: 8, maxConcurrentPerHost: 4))
    let results = try await Batch(ids.map { GetUser(client: client, id: $0) }, queue: users).run()   // in input order
    // README end
    return results
}
