import CourierConformance
import CourierTestServer
import Testing

@Suite("The Calculator example", .timeLimit(.minutes(2)))
struct CalculatorExampleTests {
    @Test("runs against a service URL given with --soap-url, over every transport, faults included")
    func givenURL() async throws {
        let executable = try #require(
            ChildProcess.sibling(named: "courier-calculator"),
            "build courier-calculator first: COURIER_DEVELOPMENT=1 swift build --build-tests")
        try await withServer { server in
            let url = server.baseURL + "/calculator.asmx"
            let outcome = try await ChildProcess.run(executable, ["--soap-url", url], timeout: .seconds(60))
            #expect(outcome.status == 0, "\(outcome.output)\n\(outcome.errors)")
            #expect(outcome.output.contains("Courier Calculator example: \(url)\n"))
            #expect(!outcome.output.contains("loopback stand-in"))
            for transport in ["curl", "urlsession"] {
                #expect(outcome.output.contains("[\(transport)] SOAP 1.1: 2+40=42 2-40=-38 6×7=42 84÷2=42"))
                #expect(outcome.output.contains("[\(transport)] SOAP 1.2: 1÷0 → soap_fault 500 soap12:Receiver"))
            }
            // 2 versions × (4 results + 1 fault) per transport, all through the server.
            #expect(server.requestCount >= 20)
        }
    }
}
