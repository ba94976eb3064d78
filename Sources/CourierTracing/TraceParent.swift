#if Tracing
    import Foundation
    import ServiceContextModule

    /// A W3C Trace Context `traceparent` value: version 00, a 16-byte trace id, an 8-byte parent
    /// (span) id and the flags.
    ///
    /// Courier writes one on every call through ``TracingMiddleware`` when the tracer did not. To
    /// continue an incoming trace, put the incoming value in the task's service context:
    /// ```swift
    /// var context = ServiceContext.current ?? .topLevel
    /// context.traceParent = TraceParent(header: incomingHeaderValue)
    /// try await ServiceContext.withValue(context) { try await client.send(GetUser(id: 42)) }
    /// ```
    public struct TraceParent: Sendable, Hashable, CustomStringConvertible {
        /// 32 lowercase hex digits, not all zero.
        public let traceID: String
        /// 16 lowercase hex digits, not all zero.
        public let parentID: String
        /// The flags; bit 0 is "sampled".
        public let flags: UInt8

        /// Parses a `traceparent` header value; `nil` when malformed (as the specification says to
        /// treat it).
        /// - Parameter header: For example `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`.
        public init?(header: String) {
            let parts = header.trimmingCharacters(in: .whitespaces).split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count >= 4, parts[0].count == 2, parts[0] != "ff", Self.isHex(parts[0]),
                parts[0] != "00" || parts.count == 4,
                parts[1].count == 32, Self.isHex(parts[1]), parts[1] != Substring(String(repeating: "0", count: 32)),
                parts[2].count == 16, Self.isHex(parts[2]), parts[2] != Substring(String(repeating: "0", count: 16)),
                parts[3].count == 2, Self.isHex(parts[3]), let flags = UInt8(parts[3], radix: 16)
            else { return nil }
            traceID = String(parts[1])
            parentID = String(parts[2])
            self.flags = flags
        }

        /// A new span in `parent`'s trace, or the first span of a new trace.
        /// - Parameter parent: The incoming trace, if any.
        /// - Returns: The value to send: same trace id and flags as `parent`, a new parent id.
        public static func child(of parent: TraceParent?) -> TraceParent {
            TraceParent(
                traceID: parent?.traceID ?? randomHex(bytes: 16), parentID: randomHex(bytes: 8), flags: parent?.flags ?? 0x01)
        }

        private init(traceID: String, parentID: String, flags: UInt8) {
            self.traceID = traceID
            self.parentID = parentID
            self.flags = flags
        }

        /// The header value, `00-<trace id>-<parent id>-<flags>`.
        public var description: String {
            let flagText = String(flags, radix: 16)
            return "00-\(traceID)-\(parentID)-\(flagText.count == 1 ? "0" + flagText : flagText)"
        }

        private static func isHex(_ text: Substring) -> Bool {
            text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
        }

        private static func randomHex(bytes: Int) -> String {
            var generator = SystemRandomNumberGenerator()
            var text = ""
            repeat {
                text = ""
                for _ in 0..<bytes {
                    let byte = UInt8.random(in: 0...255, using: &generator)
                    text += byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
                }
            } while text.utf8.allSatisfy { $0 == 48 }
            return text
        }
    }

    /// The service-context key under which an incoming `traceparent` travels.
    private enum TraceParentKey: ServiceContextKey {
        typealias Value = TraceParent
        static var nameOverride: String? { "traceparent" }
    }

    extension ServiceContext {
        /// The W3C trace this task belongs to, if the service put one here.
        public var traceParent: TraceParent? {
            get { self[TraceParentKey.self] }
            set { self[TraceParentKey.self] = newValue }
        }
    }
#endif
