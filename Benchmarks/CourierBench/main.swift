// courier-bench: compares Courier's transports on an embedded server or your own endpoint.
// See BENCHMARKS.md; the code is in CourierBenchKit so that the tests can drive it.
import CourierBenchKit

await CourierBenchCommand.runFromCommandLine()
