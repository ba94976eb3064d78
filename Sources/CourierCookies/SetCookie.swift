import Courier
import Foundation

/// Reads one `Set-Cookie` field (RFC 6265 5.2) into the cookie the jar stores (5.3), or `nil` when
/// the field is malformed or the rules refuse it.
enum SetCookie {
    /// The most cookies one answer may set, and the longest attribute value read.
    static let maxCookiesPerAnswer = 50
    static let maxAttributeBytes = 1024

    static func parse(
        _ field: String, for target: CookieTarget, suffixes: PublicSuffixes, now: ContinuousClock.Instant, wallNow: Int64
    ) -> CookieJar.Cookie? {
        let parts = field.split(separator: ";", omittingEmptySubsequences: false)
        guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { return nil }
        let name = pair[..<equals].trimmingCharacters(in: .whitespaces)
        let value = pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        func hasControl(_ text: String) -> Bool { text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } }
        guard !name.isEmpty, !hasControl(name), !hasControl(value), !name.contains("="),
            name.utf8.count + value.utf8.count <= CookieJar.maxCookieBytes
        else { return nil }

        var domain: String?
        var path: String?
        var secure = false
        var httpOnly = false
        var maxAge: Int64?
        var expiresText: String?
        for attribute in parts.dropFirst() where attribute.utf8.count <= maxAttributeBytes {
            let pieces = attribute.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = pieces[0].trimmingCharacters(in: .whitespaces).lowercased()
            let text = pieces.count > 1 ? pieces[1].trimmingCharacters(in: .whitespaces) : ""
            switch key {
            case "expires":
                expiresText = text  // the last one counts; parsed once, after the loop
            case "max-age":
                let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
                guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { continue }
                let magnitude = digits.count > 12 ? Int64(1) << 40 : Int64(digits) ?? 0
                maxAge = text.hasPrefix("-") ? -magnitude : magnitude
            case "domain":
                var named = text.lowercased()
                while named.hasPrefix(".") { named.removeFirst() }
                if named.hasSuffix(".") { named.removeLast() }
                if !named.isEmpty { domain = named }
            case "path":
                path = text.hasPrefix("/") && !hasControl(text) ? text : nil
            case "secure":
                secure = true
            case "httponly":
                httpOnly = true
            default:
                break  // SameSite and unknown attributes are ignored
            }
        }

        // Secure cookies only from a secure origin (RFC 6265bis 5.7), and the name prefixes'
        // promises: `__Secure-` needs Secure; `__Host-` needs Secure, no Domain and Path=/.
        if secure, !target.isSecure { return nil }
        if name.hasPrefix("__Secure-") || name.hasPrefix("__Host-"), !secure { return nil }
        if name.hasPrefix("__Host-"), domain != nil || path != "/" { return nil }
        var hostOnly = true
        var cookieDomain = target.host
        if let domain {
            if target.isAddress || suffixes.isPublicSuffix(domain) {
                // An address or a public suffix is taken only as the host itself (then host-only).
                guard domain == target.host else { return nil }
            } else {
                guard target.domainMatches(domain) else { return nil }
                hostOnly = false
                cookieDomain = domain
            }
        }
        var expires: ContinuousClock.Instant?
        if let maxAge {
            expires = maxAge <= 0 ? now - .seconds(1) : now + .seconds(maxAge)
        } else if let expiresText, let date = cookieDate(expiresText) {
            // The date's distance from now on the wall clock of the client's clock (as the cache
            // ages answers).
            let seconds = date.seconds - wallNow
            expires = seconds <= 0 ? now - .seconds(1) : now + .seconds(min(seconds, Int64(1) << 40))
        }
        return CookieJar.Cookie(
            name: name, value: value, domain: cookieDomain, path: path ?? target.defaultPath, isHostOnly: hostOnly, isSecure: secure,
            isHTTPOnly: httpOnly, expires: expires, created: 0, used: 0, site: suffixes.site(of: cookieDomain))
    }

    /// An `Expires` date in the forms servers send: the three HTTP-date forms, and the cookie
    /// forms with dashes and two-digit years (`Thu, 01-Jan-70 00:00:00 GMT`: 70-99 are 19xx,
    /// 00-69 are 20xx, as RFC 6265 5.1.1 reads them).
    static func cookieDate(_ text: String) -> HTTPDate? {
        if let date = HTTPDate(text) { return date }
        var parts = text.replacingOccurrences(of: "-", with: " ").split(separator: " ").map(String.init)
        if parts.count == 6, parts[3].count == 2, let year = Int(parts[3]) {
            parts[3] = String(year >= 70 ? 1900 + year : 2000 + year)
        }
        return HTTPDate(parts.joined(separator: " "))
    }
}
