// courier-bench: compares Courier's transports on an embedded server or your own endpoint.
// See BENCHMARKS.md; the code is in CourierBenchKit so that the tests can drive it.
import CourierBenchKit
import Logging

// The tool counts and reports failures itself: the clients' failure warnings (one line per failed
// call, thousands in a fault or storm cell) would flood standard error, so only errors print.
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .error
    return handler
}
await CourierBenchCommand.runFromCommandLine()
