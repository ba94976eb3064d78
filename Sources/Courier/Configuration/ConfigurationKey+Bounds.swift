import Foundation

// The ranges of the keys: written once, in the key table, as each key's `bound`; read by
// `ClientConfiguration.validate`, the sections' own `validate`, and the documentation's key list.

extension ConfigurationKey {
    /// The values a key allows: the text errors and the documentation state (`1 to 10`,
    /// `0.001 to 86400 seconds`), and the check of a configuration's value against them.
    package struct Bound: Sendable {
        /// The allowed values, as errors and the documentation state them.
        package let allowed: String
        /// The configuration's value as text when it is out of range; `nil` when it is allowed.
        let problem: @Sendable (ClientConfiguration) -> String?

        static func within(_ range: ClosedRange<Int>, _ path: Path<Int>) -> Self {
            Bound(allowed: "\(range.lowerBound) to \(range.upperBound)") { configuration in
                let value = configuration[keyPath: path]
                return range.contains(value) ? nil : "\(value)"
            }
        }

        static func within(_ range: ClosedRange<Int>, _ path: Path<Int?>) -> Self {
            Bound(allowed: "\(range.lowerBound) to \(range.upperBound)") { configuration in
                guard let value = configuration[keyPath: path] else { return nil }
                return range.contains(value) ? nil : "\(value)"
            }
        }

        static func within(_ range: ClosedRange<Double>, aboveLower: Bool, _ path: Path<Double>) -> Self {
            let (lower, upper) = (documented(range.lowerBound) ?? "", documented(range.upperBound) ?? "")
            return Bound(allowed: aboveLower ? "above \(lower), at most \(upper)" : "\(lower) to \(upper)") { configuration in
                let value = configuration[keyPath: path]
                let allowed = range.contains(value) && !(aboveLower && value == range.lowerBound)
                return allowed ? nil : "\(value)"
            }
        }

        static func within(_ range: ClosedRange<Duration>, aboveLower: Bool = false, _ path: Path<Duration>) -> Self {
            Bound(allowed: text(range, aboveLower: aboveLower)) { configuration in
                let value = configuration[keyPath: path]
                let allowed = range.contains(value) && !(aboveLower && value == range.lowerBound)
                return allowed ? nil : (documented(value) ?? "\(value)") + " seconds"
            }
        }

        static func within(_ range: ClosedRange<Duration>, _ path: Path<Duration?>) -> Self {
            Bound(allowed: text(range, aboveLower: false)) { configuration in
                guard let value = configuration[keyPath: path] else { return nil }
                return range.contains(value) ? nil : (documented(value) ?? "\(value)") + " seconds"
            }
        }

        /// A duration key written in whole milliseconds (`resilience.hedging.minimumDelayMs`).
        static func within(milliseconds range: ClosedRange<Duration>, _ path: Path<Duration>) -> Self {
            @Sendable func text(_ duration: Duration) -> String { documented(duration / .milliseconds(1)) ?? "" }
            return Bound(allowed: "\(text(range.lowerBound)) to \(text(range.upperBound)) milliseconds") { configuration in
                let value = configuration[keyPath: path]
                return range.contains(value) ? nil : "\(text(value)) milliseconds"
            }
        }

        /// The same check, stated as `allowed` (for a range another key narrows: `baseDelay to 300 seconds`).
        func saying(_ allowed: String) -> Self {
            Bound(allowed: allowed, problem: problem)
        }

        private static func text(_ range: ClosedRange<Duration>, aboveLower: Bool) -> String {
            let (lower, upper) = (documented(range.lowerBound) ?? "", documented(range.upperBound) ?? "")
            return aboveLower ? "above \(lower), at most \(upper) seconds" : "\(lower) to \(upper) seconds"
        }
    }

    /// This key with the values it allows (for a key made by hand rather than by a typed constructor).
    func bounded(_ bound: Bound) -> Self {
        var key = self
        key.bound = bound
        return key
    }

    /// Checks the values of the keys whose names begin with `prefix` (every key by default)
    /// against their ranges, in the table's order.
    /// - Throws: ``ConfigurationError`` naming the first key out of range.
    package static func checkBounds(of configuration: ClientConfiguration, prefix: String = "", source: String)
        throws(ConfigurationError)
    {
        for key in all where key.name.hasPrefix(prefix) {
            if let bound = key.bound, let value = bound.problem(configuration) {
                throw ConfigurationError(key: key.name, value: value, allowed: bound.allowed, source: source)
            }
        }
    }
}
