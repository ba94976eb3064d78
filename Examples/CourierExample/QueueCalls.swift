import Courier
import Foundation

/// One product page, as an API object (the batch items).
final class ProductAPI: BaseAPI<EchoSummary>, @unchecked Sendable {
    let id: Int
    init(client: NetworkClient, id: Int) {
        self.id = id
        super.init(client: client)
    }
    override var path: String { "echo/products/\(id)" }
    override var priority: RequestPriority { .low }
}

/// A value-type step for the sequence: looks a product up by the path the previous step echoed.
struct ProductDetails: Endpoint {
    typealias Output = EchoSummary
    var previousPath: String
    var path: String { "echo/details" }
    var query: [QueryItem] { [QueryItem("of", previousPath)] }
}

/// A batch of twelve calls through a queue of four, then a two-step sequence. Returns whether both
/// behaved as expected.
func runQueueCalls(transport name: String, client: NetworkClient) async -> Bool {
    var ok = true
    do {
        let queue = try RequestQueue(name: "products", limits: .init(maxConcurrent: 4, maxConcurrentPerHost: 4))
        let batch = Batch((1...12).map { ProductAPI(client: client, id: $0) }, queue: queue)
        let reported = Locked(0)
        var callbacks = Batch<EchoSummary>.Callbacks()
        callbacks.progress = { progress in reported.withLock { $0 = max($0, progress.finished) } }
        batch.callbacks = callbacks
        let results = try await batch.run()
        let succeeded = results.filter { (try? $0.get()) != nil }.count
        let inOrder = results.enumerated().allSatisfy { (try? $1.get())?.path == "/echo/products/\($0 + 1)" }
        print("  [\(name)] batch        → \(succeeded)/\(results.count) succeeded, results in input order: \(inOrder)")
        ok = succeeded == 12 && inOrder && reported.withLock { $0 } == 12

        let sequence = CallSequence("product", ProductAPIEndpoint(id: 7))
            .then("details") { product in ProductDetails(previousPath: product.path) }
        let details = try await sequence.run(on: client)
        print("  [\(name)] sequence     → \(details)")
        ok = ok && details.rawQuery == "of=%2Fecho%2Fproducts%2F7"
    } catch {
        print("  [\(name)] queue calls  ✗ \(error)")
        ok = false
    }
    return ok
}

/// The first sequence step, as a value type.
struct ProductAPIEndpoint: Endpoint {
    typealias Output = EchoSummary
    var id: Int
    var path: String { "echo/products/\(id)" }
}
