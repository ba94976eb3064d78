import Foundation
import HTTPTypes

@testable import Courier
@testable import CourierCache
@testable import CourierCurl

/// One parser fed whatever libFuzzer makes: it must return or throw a typed error, never crash,
/// hang or grow without bound.
struct FuzzTarget: Sendable {
    let name: String
    let run: @Sendable (UnsafeBufferPointer<UInt8>) -> Void

    static let all: [FuzzTarget] =
        [
            // Response heads as the curl transport receives them: the input is split into lines at
            // LF, each handed over with its LF, as libcurl does; a finished head goes through the
            // chain's head checks.
            FuzzTarget(name: "response-head") { bytes in
                var parser = CurlResponseHead()
                var start = 0
                for index in bytes.indices where bytes[index] == 0x0A || index == bytes.count - 1 {
                    let line = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start...index]))
                    start = index + 1
                    switch parser.take(bytes: line) {
                    case .invalid: return
                    case .finalEnd:
                        if let head = parser.response { _ = ResponseHeadChecks.problem(in: head, limits: parser.limits) }
                        return
                    case .partial, .interimEnd: continue
                    }
                }
            },
            // A Location against a fixed request, with its properties checked (FuzzTarget+Location).
            location,
            // Cache-Control, the dates and the rest of a stored response's freshness information.
            FuzzTarget(name: "cache-headers") { bytes in
                let text = String(decoding: bytes, as: UTF8.self)
                let parts = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                var fields = HTTPFields()
                let names: [HTTPField.Name] = [.cacheControl, .date, .expires, .age, .lastModified, .vary, .eTag]
                for (index, part) in parts.prefix(14).enumerated() {
                    fields.append(HTTPField(name: names[index % names.count], value: part))
                }
                let freshness = StoredFreshness(status: 200, fields: fields, requestTime: 1_700_000_000, responseTime: 1_700_000_001)
                _ = freshness.isFresh(now: 1_700_000_100, request: CacheControl(fields: parts.prefix(2).map { $0 }))
                _ = freshness.currentAge(now: Int64.max / 2)
                _ = HTTPDate(text)
            },
            // The configuration file's JSON, then its range checks.
            FuzzTarget(name: "configuration") { bytes in
                guard let configuration = try? ClientConfiguration().applyingJSON(Data(buffer: bytes), source: "fuzz") else { return }
                _ = try? configuration.validate(source: "fuzz")
            },
            // Retry-After: seconds or an HTTP date.
            FuzzTarget(name: "retry-after") { bytes in
                _ = RetryAfter.parse(String(decoding: bytes, as: UTF8.self), now: Date(timeIntervalSince1970: 1_700_000_000))
            },
            url,
        ] + bodies + wings
}
