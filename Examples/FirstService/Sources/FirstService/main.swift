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

// A key of a wing this service does not link (the cookie jar is the product CourierCookies) is
// refused naming the product, not ignored.
do {
    _ = try ClientConfiguration.load(environment: ["COURIER_COOKIES": "true"])
    fail("COURIER_COOKIES was accepted without CourierCookies")
} catch {
    guard error.description.contains("CourierCookies") else { fail("COURIER_COOKIES: \(error)") }
    print("cookies without CourierCookies: refused")
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
