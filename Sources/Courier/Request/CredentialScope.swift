import HTTPTypes

/// Which request headers are credentials: the one definition every layer reads.
///
/// A header is a credential when its name (compared in lowercase) is one of ``alwaysNames``
/// (`Authorization`, `Proxy-Authorization`, `Cookie`), one of ``usualTokenNames`` (the common
/// API-key and token headers, such as `X-Api-Key`), or one the configuration names as secret
/// (``ClientConfiguration/secretHeaderNames``, and secret header rules per call). Then:
///
/// - **redirects:** it never reaches another origin, even when ``FollowUp/crossOriginSafelist``
///   names it;
/// - **the response cache:** an answer to a request that carried credentials is stored under a
///   keyed fingerprint of them and served only to a request with the same ones;
/// - **de-duplication:** calls with different credentials never share a transfer;
/// - **responses:** what a response gives one caller only (``isCallerOnly(_:)``: `Set-Cookie`,
///   `Authentication-Info`) is never stored in the cache nor handed to a caller that joined
///   another's transfer;
/// - **redaction:** its value is never logged, labelled, or shown in an error or a description.
///
/// Read it through ``RequestContext/credentialHeaderNames`` or ``RequestContext/isCredential(_:)``.
public enum CredentialScope {
    /// Header names (lowercase) that are always credentials.
    public static let alwaysNames: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The usual API-key and token header names (lowercase), credentials unless a service has no
    /// such header: `X-Api-Key`, `Api-Key`, `X-Auth-Token`, `X-Access-Token`, `X-Amz-Security-Token`,
    /// `X-Goog-Api-Key`, `Private-Token`, `X-Csrf-Token`, `X-Xsrf-Token`.
    public static let usualTokenNames: Set<String> = [
        "x-api-key", "api-key", "x-auth-token", "x-access-token", "x-amz-security-token", "x-goog-api-key", "private-token",
        "x-csrf-token", "x-xsrf-token",
    ]

    /// ``alwaysNames`` and ``usualTokenNames``: the credentials of a configuration that names no
    /// secret header of its own.
    public static let standardNames: Set<String> = alwaysNames.union(usualTokenNames)

    /// Whether the header `name` is a credential.
    /// - Parameters:
    ///   - name: The header name, lowercase (an `HTTPField.Name`'s `canonicalName`).
    ///   - secretNames: The further secret names of the call or configuration (lowercase).
    /// - Returns: `true` for a credential.
    public static func isCredential(_ name: String, secretNames: Set<String>) -> Bool {
        standardNames.contains(name) || (!secretNames.isEmpty && secretNames.contains(name))
    }

    /// Whether `name` has an ASCII uppercase letter (checked without allocating: it runs whenever a
    /// middleware adds a secret name to a call).
    static func hasUppercase(_ name: String) -> Bool {
        name.utf8.contains { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }

    /// A keyed fingerprint of the credential fields of `fields` (names and values, in order), or
    /// `nil` when there are none: 128 bits of SipHash-2-4 under `key`, in hex. Without the key, the
    /// fingerprint says nothing about the values; with another key it differs. Two requests get the
    /// same fingerprint only with the same credentials in the same order.
    /// - Parameters:
    ///   - fields: A request's header fields.
    ///   - secretNames: The further secret names (lowercase).
    ///   - identityNames: Names (lowercase) that are no secret but say whom the request is for (a
    ///     tenant header), fingerprinted with the credentials where a table must keep callers apart.
    ///   - key: The secret of the table the fingerprint goes into (a cache, a queue).
    /// - Returns: 32 hex digits, or `nil`.
    package static func fingerprint(
        of fields: HTTPFields, secretNames: Set<String>, identityNames: Set<String> = [], key: FingerprintKey
    ) -> String? {
        var bytes: [UInt8] = []
        for field in fields {
            let name = field.name.canonicalName
            guard isCredential(name, secretNames: secretNames) || (!identityNames.isEmpty && identityNames.contains(name)) else {
                continue
            }
            bytes += field.name.canonicalName.utf8
            bytes.append(0)
            bytes += field.value.utf8
            bytes.append(0)
        }
        guard !bytes.isEmpty else { return nil }
        return key.fingerprint(bytes)
    }

    /// Whether a response field belongs only to the caller whose request it answered: `Set-Cookie`
    /// (a session given to that caller), `Authentication-Info` and `Proxy-Authentication-Info`
    /// (RFC 9110, section 11.6.3: about that caller's credentials). The one rule for handing a
    /// response to anyone else: the cache never stores them, and a caller that joined another's
    /// transfer never receives them.
    /// - Parameter name: A response field's name.
    /// - Returns: `true` for a field that must not reach another caller.
    public static func isCallerOnly(_ name: HTTPField.Name) -> Bool {
        name == .setCookie || name == .authenticationInfo || name == .proxyAuthenticationInfo
    }

    /// `fields` without the fields that belong only to the caller they answered
    /// (``isCallerOnly(_:)``): what may be handed to another caller. No copy when there are none.
    package static func shareable(_ fields: HTTPFields) -> HTTPFields {
        guard fields.contains(where: { isCallerOnly($0.name) }) else { return fields }
        return HTTPFields(fields.filter { !isCallerOnly($0.name) })
    }

}

/// The random secret one table (a response cache, a queue's de-duplication) keys its credential
/// fingerprints with: 256 bits from the system's random source, made when the table is.
package struct FingerprintKey: Sendable, Hashable {
    package let k0: UInt64, k1: UInt64, k2: UInt64, k3: UInt64

    /// A new random key.
    package init() {
        var generator = SystemRandomNumberGenerator()
        (k0, k1, k2, k3) = (generator.next(), generator.next(), generator.next(), generator.next())
    }

    /// A given key (tests, and a disk cache's stored one).
    package init(_ k0: UInt64, _ k1: UInt64, _ k2: UInt64, _ k3: UInt64) {
        (self.k0, self.k1, self.k2, self.k3) = (k0, k1, k2, k3)
    }

    /// 128 bits of SipHash-2-4 of `bytes` under this key, as 32 hex digits: without the key it
    /// says nothing about the bytes.
    package func fingerprint(_ bytes: [UInt8]) -> String {
        Self.hex(SipHash24.hash(bytes, k0: k0, k1: k1)) + Self.hex(SipHash24.hash(bytes, k0: k2, k1: k3))
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// SipHash-2-4 (Aumasson and Bernstein), 64-bit output: a keyed pseudorandom function.
enum SipHash24 {
    static func hash(_ message: [UInt8], k0: UInt64, k1: UInt64) -> UInt64 {
        var v0: UInt64 = 0x736f_6d65_7073_6575 ^ k0
        var v1: UInt64 = 0x646f_7261_6e64_6f6d ^ k1
        var v2: UInt64 = 0x6c79_6765_6e65_7261 ^ k0
        var v3: UInt64 = 0x7465_6462_7974_6573 ^ k1
        func round() {
            v0 &+= v1
            v1 = (v1 << 13) | (v1 >> 51)
            v1 ^= v0
            v0 = (v0 << 32) | (v0 >> 32)
            v2 &+= v3
            v3 = (v3 << 16) | (v3 >> 48)
            v3 ^= v2
            v0 &+= v3
            v3 = (v3 << 21) | (v3 >> 43)
            v3 ^= v0
            v2 &+= v1
            v1 = (v1 << 17) | (v1 >> 47)
            v1 ^= v2
            v2 = (v2 << 32) | (v2 >> 32)
        }
        let blocks = message.count / 8
        for block in 0..<blocks {
            var m: UInt64 = 0
            for index in 0..<8 { m |= UInt64(message[block * 8 + index]) << (8 * UInt64(index)) }
            v3 ^= m
            round()
            round()
            v0 ^= m
        }
        var last = UInt64(message.count & 0xFF) << 56
        for index in 0..<(message.count % 8) { last |= UInt64(message[blocks * 8 + index]) << (8 * UInt64(index)) }
        v3 ^= last
        round()
        round()
        v0 ^= last
        v2 ^= 0xFF
        round()
        round()
        round()
        round()
        return v0 ^ v1 ^ v2 ^ v3
    }
}
