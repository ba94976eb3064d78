// swift-format-ignore-file
// (The README's snippets keep their compact, hand-aligned layout.)
// README block 1
import Courier
import Foundation  // (compiled wrapper)

struct User: Decodable, Sendable { let id: Int; let name: String; let joined: Date }
struct NewUser: Encodable, Sendable { let name: String }

func oneOffCalls() async throws {  // (compiled wrapper)
    var configuration = ClientConfiguration(baseURL: "https://api.example.com")
    configuration.json.dates = .iso8601                  // the client's one JSON coder: dates and keys
    let client = try NetworkClient(configuration: configuration)
    let user = try await client.get("users/42", as: User.self)
    let created = try await client.post("users", json: NewUser(name: "Ada"), as: User.self)
    // README end
    _ = (user, created)
}
