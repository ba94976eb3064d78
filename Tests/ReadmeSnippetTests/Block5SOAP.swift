// swift-format-ignore-file
// (The README's snippets keep their compact, hand-aligned layout.)
import Courier
// README block 5
import CourierXML

struct Add: Encodable, Sendable { let intA: Int; let intB: Int }   // the operation: named after its input type
struct AddResponse: Decodable, Sendable { let AddResult: Int }    // the Body's element

struct AddNumbers: SOAPOperation {
    typealias Output = AddResponse
    let input: Add
    var path: String { "calculator.asmx" }
    var namespace: String { "http://tempuri.org/" }                // action: http://tempuri.org/Add
}

func soap(client: NetworkClient) async throws -> Int {  // (compiled wrapper)
    let sum = try await client.send(AddNumbers(input: Add(intA: 2, intB: 3))).AddResult
    // README end
    return sum
}
