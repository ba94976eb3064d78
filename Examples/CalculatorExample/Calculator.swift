import Courier
import CourierXML
import Foundation

// The Calculator SOAP service (http://www.dneonline.com/calculator.asmx, namespace
// http://tempuri.org/): four operations on two integers. Each input type is named after its
// operation, so SOAPOperation's default operation name and action (http://tempuri.org/Add) fit.

struct Add: Encodable, Sendable {
    let intA: Int
    let intB: Int
}
struct Subtract: Encodable, Sendable {
    let intA: Int
    let intB: Int
}
struct Multiply: Encodable, Sendable {
    let intA: Int
    let intB: Int
}
struct Divide: Encodable, Sendable {
    let intA: Int
    let intB: Int
}

struct AddResponse: Decodable, Sendable { let AddResult: Int }
struct SubtractResponse: Decodable, Sendable { let SubtractResult: Int }
struct MultiplyResponse: Decodable, Sendable { let MultiplyResult: Int }
struct DivideResponse: Decodable, Sendable { let DivideResult: Int }

/// Where the service lives and which SOAP version to speak; shared by the four operations.
struct CalculatorService: Sendable {
    /// The scheme and authority, for example `http://www.dneonline.com`.
    var origin: String
    /// The path, for example `calculator.asmx`.
    var path: String
    var version: SOAPVersion

    /// Splits a service URL into origin and path.
    init?(url: String, version: SOAPVersion) {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let afterScheme = url[schemeEnd.upperBound...]
        let slash = afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex
        origin = String(url[..<slash])
        path = String(afterScheme[slash...].drop { $0 == "/" })
        self.version = version
    }
}

/// One Calculator operation: `Input` is `Add`, `Subtract`, `Multiply` or `Divide`.
struct CalculatorCall<Input: Encodable & Sendable, Output: Decodable & Sendable>: SOAPOperation {
    let service: CalculatorService
    let input: Input
    var baseURL: String? { service.origin }
    var path: String { service.path }
    var namespace: String { "http://tempuri.org/" }
    var soapVersion: SOAPVersion { service.version }
}

/// The same `Divide` as an API object, for code built on BaseAPI.
final class DivideAPI: SOAPAPI<Divide, DivideResponse>, @unchecked Sendable {
    let service: CalculatorService
    init(client: NetworkClient, service: CalculatorService, input: Divide) {
        self.service = service
        super.init(client: client, input: input)
    }
    override var baseURL: String? { service.origin }
    override var path: String { service.path }
    override var namespace: String { "http://tempuri.org/" }
    override var soapVersion: SOAPVersion { service.version }
}
