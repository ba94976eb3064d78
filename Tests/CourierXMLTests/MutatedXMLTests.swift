import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import CourierTestServer
@testable import CourierXML

/// Mangled documents never crash the decoders: each one decodes or throws.
@Suite("Mutated XML and SOAP documents")
struct MutatedXMLTests {
    static let alphabet = Array("<>/=\"'&;![]-?:x \n".utf8) + [0, 0xFF, 0xC3]

    /// One mutation: flip, insert, delete, duplicate or cut a span.
    static func mutate(_ bytes: [UInt8], _ random: inout SeededGenerator) -> [UInt8] {
        var out = bytes
        for _ in 0..<Int.random(in: 1...4, using: &random) where !out.isEmpty {
            let at = Int.random(in: 0..<out.count, using: &random)
            switch Int.random(in: 0..<5, using: &random) {
            case 0: out[at] = alphabet.randomElement(using: &random) ?? 0
            case 1: out.insert(alphabet.randomElement(using: &random) ?? 0, at: at)
            case 2: out.remove(at: at)
            case 3:
                let end = min(out.count, at + Int.random(in: 1...16, using: &random))
                out.insert(contentsOf: out[at..<end], at: at)
            default: out.removeSubrange(at..<out.count)
            }
        }
        return out
    }

    @Test("3,000 mutations of a catalogue and of a SOAP fault: each decodes or fails with an error")
    func mutations() throws {
        var random = SeededGenerator(seed: 21)
        let catalogue = Array(SampleDocuments.hotelsXML(approximateBytes: 600).utf8)
        let fault = Array(SOAPFaultTests.fault11.utf8)
        let options = XMLTreeDecoding.Options(XMLCoding.makeDecoder())
        var outcomes = (decoded: 0, failed: 0)
        for round in 0..<3_000 {
            let source = round.isMultiple(of: 2) ? catalogue : fault
            let data = Data(Self.mutate(source, &random))
            do {
                if round.isMultiple(of: 2) {
                    _ = try XMLCoding.decode(SampleCatalogue.self, from: data, options: options, limits: .default)
                } else {
                    _ = try SOAPResponseReading.decode(
                        AddResponse.self, from: data, head: HTTPResponse(status: .internalServerError), options: options, limits: .default)
                }
                outcomes.decoded += 1
            } catch {
                outcomes.failed += 1
            }
        }
        #expect(outcomes.decoded + outcomes.failed == 3_000)
        #expect(outcomes.failed > 0)
    }
}
