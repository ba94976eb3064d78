// swift-format-ignore-file
// (The README's snippets keep their compact, hand-aligned layout.)
import Courier

// README block 2
final class GetUser: BaseAPI<User>, @unchecked Sendable {
    let id: Int
    init(client: NetworkClient, id: Int) { self.id = id; super.init(client: client) }
    override var path: String { "users/\(id)" }        // plain text; Courier percent-encodes it
    override var query: [QueryItem] { [QueryItem("expand", "teams")] }
}

func apiObject(client: NetworkClient) async throws -> User {  // (compiled wrapper)
    try GetUser(client: client, id: 42).start { result in print(result) }   // completion, called once
    let user = try await GetUser(client: client, id: 7).response()          // async; Task cancellation cancels the call
    // README end
    return user
}
