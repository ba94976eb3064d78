// swift-format-ignore-file
// (The README's snippets keep their compact, hand-aligned layout.)
import Courier
import CourierCurl
import CourierOpenAPI
import Foundation
import InventoryClient

func openAPI(configuration: ClientConfiguration, serverURL: URL) async throws {
    // README block 7
    let client = try NetworkClient(configuration: configuration, registry: TransportRegistry([.curl()]))
    let inventory = Client(serverURL: serverURL, transport: CourierClientTransport(client: client, team: "stock"))
    let item = try await inventory.getItem(path: .init(itemID: 7)).ok.body.json   // operationID "getItem" labels metrics and logs
    // README end
    _ = item
}
