// swift-format-ignore-file
// (The README's snippets keep their compact, hand-aligned layout.)
// README block 1
import Courier

struct User: Decodable, Sendable { let id: Int; let name: String }
struct NewUser: Encodable, Sendable { let name: String }

func oneOffCalls() async throws {  // (compiled wrapper)
    let client = try NetworkClient(baseURL: "https://api.example.com")
    let user = try await client.get("users/42", as: User.self)
    let created = try await client.post("users", json: NewUser(name: "Ada"), as: User.self)
    // README end
    _ = (user, created)
}
