import Courier
import CourierMock
import Foundation

struct User: Codable, Sendable, Hashable {
    var id: Int
    var name: String
}

struct Problem: Codable, Sendable, Hashable {
    var code: String
    var message: String
}

final class GetUser: BaseAPI<User>, @unchecked Sendable {
    let id: Int
    init(client: NetworkClient, id: Int, queue: DispatchQueue = .global()) {
        self.id = id
        super.init(client: client, completionQueue: queue)
    }
    override var path: String { "users/\(id)" }
    override var errorDecoder: ErrorBodyDecoder? { .json(Problem.self) }
}

func makeClient(
    _ mock: MockTransport, middleware: [any Middleware] = [], timeout: Duration = .seconds(10), timeSource: (any TimeSource)? = nil
) throws -> NetworkClient {
    var configuration = ClientConfiguration(baseURL: "https://api.test", transport: "mock")
    configuration.requestTimeout = timeout
    if let timeSource { configuration.timeSource = timeSource }
    return try NetworkClient(configuration: configuration, transport: mock, middleware: middleware)
}

/// The configuration a JSON document (a configuration file's text) gives, range-checked.
func loadConfiguration(_ json: String) throws -> ClientConfiguration {
    let configuration = try ClientConfiguration().applyingJSON(Data(json.utf8), source: "test")
    try configuration.validate(source: "test")
    return configuration
}
