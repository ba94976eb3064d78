import Courier
import CourierXML

/// The Calculator service's operations (the public sample at www.dneonline.com, and its loopback
/// stand-in at `/calculator.asmx`).
struct Add: Encodable, Sendable {
    let intA: Int
    let intB: Int
}
struct Divide: Encodable, Sendable {
    let intA: Int
    let intB: Int
}
struct AddResponse: Decodable, Sendable { let AddResult: Int }
struct DivideResponse: Decodable, Sendable { let DivideResult: Int }

/// `Add` as a value.
struct AddNumbers: SOAPOperation {
    typealias Output = AddResponse
    let input: Add
    var soapVersion: SOAPVersion = .v1_1
    var soapHeaders: [SOAPHeader] = []
    var path: String { "calculator.asmx" }
    var namespace: String { "http://tempuri.org/" }
}

/// `Divide` as a value.
struct DivideNumbers: SOAPOperation {
    typealias Output = DivideResponse
    let input: Divide
    var soapVersion: SOAPVersion = .v1_1
    var path: String { "calculator.asmx" }
    var namespace: String { "http://tempuri.org/" }
}

/// `Divide` as an API object.
final class DivideAPI: SOAPAPI<Divide, DivideResponse>, @unchecked Sendable {
    override var path: String { "calculator.asmx" }
    override var namespace: String { "http://tempuri.org/" }
}

/// `Add` as a SOAP 1.2 API object.
final class AddAPI12: SOAPAPI<Add, AddResponse>, @unchecked Sendable {
    override var path: String { "calculator.asmx" }
    override var namespace: String { "http://tempuri.org/" }
    override var soapVersion: SOAPVersion { .v1_2 }
}
