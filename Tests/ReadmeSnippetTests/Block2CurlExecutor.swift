// swift-format-ignore-file
// (The README's snippets keep their compact, hand-aligned layout.)
import Courier
import CourierCurl

func curlExecutor(configuration: ClientConfiguration, ids: [Int]) async throws {
    // README block 2
    let curl = try CurlTransport()
    let client = try NetworkClient(configuration: configuration, transport: curl)
    await withTaskExecutorPreference(curl.executor) {
        for id in ids { _ = try? await GetUser(client: client, id: id).response() }
    }
    // README end
}
