// The Calculator SOAP example: Add, Subtract, Multiply and Divide over SOAP 1.1 and 1.2, then a
// division by zero that the service answers with a SOAP fault, over every transport this build
// links (or only the one COURIER_TRANSPORT names).
//
// By default it calls a loopback stand-in that checks requests as the real service does. Give
// another service URL with `--soap-url URL` or `COURIER_SOAP_URL` (for example the public
// http://www.dneonline.com/calculator.asmx; tests and CI never do).
import Courier
import CourierCurl
import CourierMock
import CourierTestServer
import CourierURLSession
import CourierXML
import Foundation
import HTTPTypes

#if AsyncHTTPClient
    import CourierAsyncHTTPClient
#endif

/// `--soap-url URL`, else `COURIER_SOAP_URL`, else `nil` (the loopback stand-in).
func requestedURL() -> String? {
    let arguments = CommandLine.arguments
    if let flag = arguments.firstIndex(of: "--soap-url"), flag + 1 < arguments.count { return arguments[flag + 1] }
    return ProcessInfo.processInfo.environment["COURIER_SOAP_URL"]
}

/// A mock transport that answers like the stand-in, in process.
func calculatorMock() -> MockTransport {
    let mock = MockTransport()
    mock.stub(.post, "/calculator.asmx") { request in
        let headers = request.head.headerFields.map { ($0.name.rawName, $0.value) }
        let answer = CourierTestServer.CalculatorService.answer(
            method: request.head.method.rawValue, headers: headers, body: Array(request.body ?? Data()))
        var fields = RequestHeaders()
        for (name, value) in answer.headers { fields.add(name, value) }
        return .status(answer.status, headers: fields, body: Data(answer.body))
    }
    return mock
}

/// Runs the operations through one client; returns whether each behaved as expected.
func runCalls(_ name: String, client: NetworkClient, serviceURL: String) async -> Bool {
    var ok = true
    for version in [SOAPVersion.v1_1, .v1_2] {
        guard let service = CalculatorService(url: serviceURL, version: version) else {
            print("  [\(name)] ✗ \(serviceURL) is not an http(s) URL")
            return false
        }
        do {
            let sum = try await client.send(CalculatorCall<Add, AddResponse>(service: service, input: Add(intA: 2, intB: 40)))
            let difference = try await client.send(
                CalculatorCall<Subtract, SubtractResponse>(service: service, input: Subtract(intA: 2, intB: 40)))
            let product = try await client.send(
                CalculatorCall<Multiply, MultiplyResponse>(service: service, input: Multiply(intA: 6, intB: 7)))
            let quotient = try await DivideAPI(client: client, service: service, input: Divide(intA: 84, intB: 2)).response()
            print(
                "  [\(name)] SOAP \(version): 2+40=\(sum.AddResult) 2-40=\(difference.SubtractResult) "
                    + "6×7=\(product.MultiplyResult) 84÷2=\(quotient.DivideResult)")
            ok =
                ok && sum.AddResult == 42 && difference.SubtractResult == -38 && product.MultiplyResult == 42
                && quotient.DivideResult == 42
        } catch {
            print("  [\(name)] SOAP \(version): ✗ \(error)")
            ok = false
        }
        do {
            _ = try await client.send(CalculatorCall<Divide, DivideResponse>(service: service, input: Divide(intA: 1, intB: 0)))
            print("  [\(name)] SOAP \(version): 1÷0 ✗ expected a fault")
            ok = false
        } catch let error as NetworkError where error.kind == .soapFault {
            let fault = error.soapFault
            print(
                "  [\(name)] SOAP \(version): 1÷0 → \(error.kind) \(error.status ?? 0) \(fault?.code ?? "?"): \(fault?.reason.prefix(90) ?? "")…"
            )
        } catch {
            print("  [\(name)] SOAP \(version): 1÷0 ✗ \(error)")
            ok = false
        }
    }
    return ok
}

let given = requestedURL()
let server: TestServer? = given == nil ? try await TestServer.start() : nil
let serviceURL = given ?? "\(server?.baseURL ?? "")/calculator.asmx"
print("Courier Calculator example: \(serviceURL)\(given == nil ? " (loopback stand-in)" : "")")
#if AsyncHTTPClient
    var entries: [TransportRegistry.Entry] = [.curl(), .urlSession(), .asyncHTTPClient()]
#else
    var entries: [TransportRegistry.Entry] = [.curl(), .urlSession()]
#endif
// The mock answers like the stand-in, so it only stands in for the loopback service.
if given == nil { entries.append(.mock(calculatorMock())) }
let registry = TransportRegistry(entries)
var allPassed = true
do {
    let configuration = try ClientConfiguration.load(defaults: ClientConfiguration(baseURL: serviceURL))
    let chosen = ProcessInfo.processInfo.environment[ClientConfiguration.transportVariable] != nil
    for name in chosen ? [configuration.transport ?? ""] : registry.names {
        var perTransport = configuration
        perTransport.transport = name
        let client = try NetworkClient(configuration: perTransport, registry: registry)
        print("transport \(name):")
        allPassed = await runCalls(name, client: client, serviceURL: serviceURL) && allPassed
        await client.shutdown()
    }
} catch {
    print("error: \(error)")
    allPassed = false
}
await server?.shutdown()
print(allPassed ? "all calls behaved as expected" : "some calls failed")
exit(allPassed ? 0 : 1)
