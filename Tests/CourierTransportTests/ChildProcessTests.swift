import CourierTestServer
import Testing

/// The child-process runner the memory, crash and benchmark tests stand on.
@Suite("ChildProcess: start, collect, stop")
struct ChildProcessTests {
    @Test("both outputs are collected whole, and the exit status comes back")
    func outputsAndStatus() async throws {
        let shell = try #require(ChildProcess.find("sh"))
        // 300,000 bytes on standard output: more than a pipe holds, so it must be drained while
        // the program runs.
        let script = "head -c 300000 /dev/zero; printf oops >&2; exit 7"
        let outcome = try await ChildProcess.run(shell, ["-c", script], timeout: .seconds(60))
        #expect(outcome.status == 7)
        #expect(!outcome.timedOut)
        #expect(outcome.output.utf8.count == 300_000 && outcome.output.utf8.allSatisfy { $0 == 0 })
        #expect(outcome.errors == "oops")
    }

    @Test("standard input is empty, and arguments arrive as given")
    func inputAndArguments() async throws {
        let shell = try #require(ChildProcess.find("sh"))
        let outcome = try await ChildProcess.run(
            shell, ["-c", "cat; printf '%s|' \"$@\"", "sh", "two words", "", "ü"], timeout: .seconds(60))
        #expect(outcome.status == 0)
        #expect(outcome.output == "two words||ü|")
    }

    @Test("a program past its time limit is stopped and says so; a signal is its status")
    func timeLimit() async throws {
        let sleep = try #require(ChildProcess.find("sleep"))
        let outcome = try await ChildProcess.run(sleep, ["60"], timeout: .milliseconds(100))
        #expect(outcome.timedOut)
        #expect(outcome.status == 15, "SIGTERM ended it")
    }

    @Test("a program that cannot start is a typed error naming it")
    func cannotStart() async throws {
        let error = await #expect(throws: ChildProcess.StartError.self) {
            try await ChildProcess.run("/nonexistent/courier-program", [], timeout: .seconds(5))
        }
        #expect(error?.description.contains("/nonexistent/courier-program") == true)
    }

    @Test("many programs started side by side all finish with their own output")
    func sideBySide() async throws {
        let shell = try #require(ChildProcess.find("sh"))
        let outputs = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<24 {
                group.addTask { (index, try await ChildProcess.run(shell, ["-c", "echo \(index)"], timeout: .seconds(60)).output) }
            }
            return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
        }
        #expect(outputs.count == 24)
        #expect(outputs.allSatisfy { $0.value == "\($0.key)\n" })
    }
}
