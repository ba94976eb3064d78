extension Duration {
    /// Whole nanoseconds, saturating at `Int64.max` (for metrics backends).
    package var wholeNanoseconds: Int64 {
        // One 128-bit division: about a third of the cost of going through `components`.
        let nanoseconds = attoseconds / 1_000_000_000
        return Int64(exactly: nanoseconds) ?? (nanoseconds < 0 ? Int64.min : Int64.max)
    }

    /// Whole milliseconds, saturating at `Int64.max` (for log fields).
    package var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow ? (seconds < 0 ? Int64.min : Int64.max) : whole &+ attoseconds / 1_000_000_000_000_000
    }
}
