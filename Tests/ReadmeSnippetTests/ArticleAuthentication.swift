// swift-format-ignore-file
// (The article's snippet keeps its hand-aligned layout.)
// Article Authentication
import Courier
import Foundation

actor ClientCredentials: CredentialProvider {
    struct Token: Decodable, Sendable {
        let accessToken: String
        let expiresIn: Int
    }

    private let tokens: NetworkClient      // the identity provider, without AuthRefreshMiddleware
    private let clientID: String
    private let secret: String
    private var current: (value: String, expires: Date)?

    init(tokenURL: String, clientID: String, secret: String) throws {
        var configuration = ClientConfiguration(baseURL: tokenURL)
        configuration.json.keys = .snakeCase            // access_token, expires_in
        tokens = try NetworkClient(configuration: configuration)
        self.clientID = clientID
        self.secret = secret
    }

    func credential() async throws -> String {
        if let current, current.expires > Date.now.addingTimeInterval(30) { return current.value }
        return try await fetch()
    }

    func refresh(rejected: String) async throws -> String {
        // Another call may have refreshed already: only a token newer than the rejected one is kept.
        if let current, current.value != rejected, current.expires > Date.now { return current.value }
        return try await fetch()
    }

    private func fetch() async throws -> String {
        let token = try await tokens.send(
            .post, "oauth/token",
            body: .form([("grant_type", "client_credentials"), ("client_id", clientID), ("client_secret", secret)]),
            as: Token.self)
        let value = "Bearer \(token.accessToken)"
        current = (value, Date.now.addingTimeInterval(TimeInterval(token.expiresIn)))
        return value
    }
}

func makeAuthenticatedClient(secret: String) throws -> NetworkClient {  // (compiled wrapper)
let provider = try ClientCredentials(tokenURL: "https://login.example.com", clientID: "orders", secret: secret)
let client = try NetworkClient(
    configuration: ClientConfiguration(baseURL: "https://api.example.com"),
    middleware: [AuthRefreshMiddleware(provider: provider)])
// Article end
return client  // (compiled wrapper)
}  // (compiled wrapper)
