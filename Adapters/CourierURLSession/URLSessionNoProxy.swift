import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where FoundationNetworking's libcurl (7.88) reads a `no_proxy` list otherwise than Courier
/// (`ProxyExclusion`): a call Courier reports as direct would then go through the proxy, or the
/// other way round. The URLSession transport follows the environment's list through its libcurl,
/// so such a list is refused at start (`URLSessionTransport.Configuration.proxyProblem`).
///
/// Both read alike: `*` alone; names, with or without a leading or trailing dot, in any case; a
/// dotted-quad IPv4 address, with a CIDR prefix from 1 to 32; an IPv6 address written as
/// `inet_ntop` writes it (`::1`), without brackets or prefix. libcurl reads everything else
/// otherwise: `*` among other entries or `*.example.com` (no wildcard), `..example.com`, `/0`,
/// other IPv4 spellings (`127.1`, `2130706433`, `127.0.0.1.`, `[127.0.0.1]`), IPv6 in another
/// spelling or with a prefix (compared as text), and a blank `no_proxy` beside a `NO_PROXY`.
enum URLSessionNoProxy {
    /// The first entry libcurl reads otherwise, or `nil`.
    /// - Parameters:
    ///   - list: The exclusions Courier read from the environment.
    ///   - environment: The process environment.
    static func entryReadOtherwise(in list: [ProxyExclusion], environment: [String: String]) -> String? {
        if let lower = environment["no_proxy"], !lower.isEmpty, lower.trimmingCharacters(in: .whitespaces).isEmpty,
            environment["NO_PROXY"]?.trimmingCharacters(in: .whitespaces).isEmpty == false
        {
            return "no_proxy=\"\(lower)\" beside NO_PROXY"
        }
        for entry in list {
            let text = entry.description
            if text == "*" ? list.count == 1 : readsAlike(text) { continue }
            return text
        }
        return nil
    }

    /// Whether libcurl 7.88 and Courier read one entry (not `*`) alike.
    static func readsAlike(_ text: String) -> Bool {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let address = String(parts[0])
        if isDottedQuad(address) {
            guard parts.count == 2 else { return true }
            return Int(parts[1]).map { (1...32).contains($0) } ?? false
        }
        if address.contains(":") { return parts.count == 1 && isCanonicalIPv6(address) }
        guard parts.count == 1 else { return false }
        var name = Substring(address)
        if name.hasPrefix(".") { name = name.dropFirst() }
        if name.hasSuffix(".") { name = name.dropLast() }
        let allowed = name.utf8.allSatisfy { byte in
            (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
        // Digits and dots only would be an IPv4 spelling libcurl does not read as an address.
        let numeric = name.utf8.allSatisfy { ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: ".") }
        return !name.isEmpty && allowed && !numeric && !name.hasPrefix(".") && !name.contains("..")
    }

    /// Four decimal octets, 0 to 255, without leading zeros.
    static func isDottedQuad(_ text: String) -> Bool {
        let octets = text.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4
            && octets.allSatisfy { octet in
                guard (1...3).contains(octet.count), octet.allSatisfy(\.isASCII), let value = Int(octet), (0...255).contains(value) else {
                    return false
                }
                return octet == "0" || !octet.hasPrefix("0")
            }
    }

    /// An IPv6 address in the form `inet_ntop` writes.
    static func isCanonicalIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return false }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return false }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) == text
    }
}
