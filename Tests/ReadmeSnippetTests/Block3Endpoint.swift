// swift-format-ignore-file
// (The README's snippets keep their compact, hand-aligned layout.)
import Courier

// README block 3
struct SearchUsers: Endpoint {
    typealias Output = [User]                       // any Decodable: JSON, or XML with CourierXML
    let name: String
    var path: String { "users" }
    var query: [QueryItem] { [QueryItem("name", name)] }
    var team: String? { "accounts" }                // picks the team's header rules and alerts
}

func endpointValue(client: NetworkClient) async throws -> [User] {  // (compiled wrapper)
    let found = try await client.send(SearchUsers(name: "Ada"))
    // README end
    return found
}
