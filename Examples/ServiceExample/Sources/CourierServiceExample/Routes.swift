import Courier
import Hummingbird
import Prometheus

/// What `GET /users/{id}` answers.
struct UserView: ResponseCodable {
    var id: Int
    var downstreamPath: String
    var downstreamQuery: String
}

/// What `GET /inventory?ids=1,2,3` answers.
struct InventoryView: ResponseCodable {
    struct Item: Codable {
        var id: Int
        var downstreamPath: String?
        var error: String?
    }
    var requested: Int
    var succeeded: Int
    var items: [Item]
}

/// The most ids one inventory request may ask for.
let maxInventoryIDs = 50

/// The service's routes: two downstream APIs through Courier, and the metrics.
func makeRouter(client: NetworkClient, inventory: RequestQueue, registry: PrometheusCollectorRegistry) -> Router<BasicRequestContext> {
    let router = Router()

    router.get("health") { _, _ in "ok" }

    // One JSON call per request. A downstream failure is a 502 that says which kind it was.
    router.get("users/:id") { _, context -> UserView in
        let id = try context.parameters.require("id", as: Int.self)
        do {
            let echo = try await client.send(GetUser(id: id))
            return UserView(id: id, downstreamPath: echo.path, downstreamQuery: echo.rawQuery)
        } catch let error as NetworkError {
            throw HTTPError(.badGateway, message: "the user API failed: \(error.shortDescription)")
        }
    }

    // A batch of stock calls through a queue that allows four at once: every item's result, in
    // the order asked.
    router.get("inventory") { request, _ -> InventoryView in
        let text = request.uri.queryParameters.get("ids") ?? ""
        let ids = text.split(separator: ",").compactMap { Int($0) }
        guard !ids.isEmpty, ids.count <= maxInventoryIDs, ids.count == text.split(separator: ",").count else {
            throw HTTPError(.badRequest, message: "ids must be 1 to \(maxInventoryIDs) comma-separated integers")
        }
        let batch = Batch(ids.map { GetStock(client: client, id: $0) }, queue: inventory)
        let results = try await batch.run()
        let items = zip(ids, results).map { id, result in
            switch result {
            case .success(let echo): InventoryView.Item(id: id, downstreamPath: echo.path)
            case .failure(let error): InventoryView.Item(id: id, error: error.shortDescription)
            }
        }
        return InventoryView(requested: ids.count, succeeded: items.filter { $0.error == nil }.count, items: items)
    }

    // Prometheus' text format: Courier's call metrics among the rest.
    router.get("metrics") { _, _ in registry.emitToString() }

    return router
}
