import Courier

/// What the downstream service answers: the loopback test server's `/echo` route echoes the
/// request it got, which is enough to show where each call went.
struct Echo: Decodable, Sendable {
    let method: String
    let path: String
    let rawQuery: String
}

/// The JSON API: one user, as a value-type endpoint.
struct GetUser: Endpoint {
    typealias Output = Echo
    var id: Int
    var path: String { "echo/users/\(id)" }
    var query: [QueryItem] { [QueryItem("expand", "teams")] }
}

/// The stock API: one item's stock level, as an API object (the items of a batch).
final class GetStock: BaseAPI<Echo>, @unchecked Sendable {
    let id: Int

    init(client: NetworkClient, id: Int) {
        self.id = id
        super.init(client: client)
    }

    override var path: String { "echo/stock/\(id)" }
}
