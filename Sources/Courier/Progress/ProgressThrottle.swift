extension ProgressReporter.Throttle {
    /// The last report a throttle measures from.
    package struct LastReport {
        package var at: ContinuousClock.Instant
        /// Bytes sent and received together, then.
        package var bytes: Int64
    }

    /// Whether `progress` may be reported at `now`, after `last`: always the first time; then
    /// only once ``interval`` has passed and, when the expected bytes are known, the bytes have
    /// moved by ``fraction`` of them. Records the report in `last` when it may.
    package func allows(_ progress: TransferProgress, at now: ContinuousClock.Instant, after last: inout LastReport?, force: Bool) -> Bool {
        let bytes = progress.bytesSent &+ progress.bytesReceived
        if !force, let previous = last {
            guard previous.at.duration(to: now) >= interval else { return false }
            if let received = progress.expectedBytesReceived {
                // In Double: the figures are bounded (``ProgressMeter/largestLength``), but a sum
                // of two must never trap.
                let expected = Double(progress.expectedBytesSent ?? 0) + Double(received)
                if expected > 0, abs(Double(bytes) - Double(previous.bytes)) < fraction * expected { return false }
            }
        }
        last = LastReport(at: now, bytes: bytes)
        return true
    }
}
