// One call as a new service makes it: a client for a base URL on whatever transport is linked,
// the client's JSON set to ISO 8601 dates, and a typed answer. Prints what it found and got, one
// `key: value` per line; exits 1 with a message when something is not as a service would expect.
//
//   first-service <base URL>
import Courier
import CourierCurl
import CourierURLSession
import Foundation

struct Order: Decodable, Sendable {
    var id: Int
    var placedAt: Date
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("first-service: " + message + "\n").utf8))
    exit(1)
}

guard CommandLine.arguments.count == 2 else { fail("usage: first-service <base URL>") }
let linked = TransportRegistry.linked.names
print("linked: \(linked.joined(separator: ","))")
guard linked == ["curl", "urlsession"] else { fail("the linked transports are \(linked), expected curl and urlsession") }

// A key of a wing this service does not link (the cookie jar is the product CourierCookies, the
// cache CourierCache) is refused naming the product, not ignored; turning it off is harmless.
for (variable, product) in [("COURIER_COOKIES", "CourierCookies"), ("COURIER_CACHE_ENABLED", "CourierCache")] {
    do {
        _ = try ClientConfiguration.load(environment: [variable: "true"])
        fail("\(variable) was accepted without \(product)")
    } catch {
        guard error.description.contains(product) else { fail("\(variable): \(error)") }
    }
    guard (try? ClientConfiguration.load(environment: [variable: "false"])) != nil else { fail("\(variable)=false was refused") }
}
print("cookies without CourierCookies: refused")
// The circuit breaker's policy is the core's, its links CourierResilience's: refused without it.
do {
    var breaking = ClientConfiguration(baseURL: CommandLine.arguments[1])
    breaking.resilience.circuitBreaker = CircuitBreakerPolicy()
    _ = try NetworkClient(configuration: breaking)
    fail("a circuit breaker was accepted without CourierResilience")
} catch {
    guard "\(error)".contains("CourierResilience") else { fail("the breaker: \(error)") }
    print("breaker without CourierResilience: refused")
}

var configuration = ClientConfiguration(baseURL: CommandLine.arguments[1])
configuration.json.dates = .iso8601
do {
    let client = try NetworkClient(configuration: configuration)
    print("transport: \(client.transport.name)")
    guard client.transport.name == "curl" else { fail("the client chose \(client.transport.name), expected curl") }
    let order = try await client.get("order.json", as: Order.self)
    print("order: \(order.id) \(Int(order.placedAt.timeIntervalSince1970))")
    do {
        _ = try await client.get("missing.json", as: Order.self)
        fail("a missing file decoded")
    } catch let error as NetworkError {
        print("missing: \(error.kind) \(error.status ?? 0)")
    }
    await client.shutdown()
} catch {
    fail("\(error)")
}
