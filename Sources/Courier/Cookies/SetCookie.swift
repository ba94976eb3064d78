import Foundation

/// Reads one `Set-Cookie` field (RFC 6265 5.2) into the cookie the jar stores (5.3), or `nil` when
/// the field is malformed or the rules refuse it.
enum SetCookie {
    /// Suffixes under which anyone may register a name: a `Domain` naming one of them (or a single
    /// label) would reach every site under it, so it is refused. The common ones, not the whole
    /// Public Suffix List.
    static let publicSuffixes: Set<String> = [
        "com", "net", "org", "edu", "gov", "mil", "int", "info", "biz", "io", "co", "app", "dev", "cloud", "me", "tv", "us",
        "uk", "co.uk", "org.uk", "ac.uk", "gov.uk", "me.uk", "de", "fr", "it", "es", "nl", "be", "ch", "at", "se", "no", "dk",
        "fi", "pl", "ru", "eu", "jp", "co.jp", "ne.jp", "or.jp", "cn", "com.cn", "net.cn", "org.cn", "in", "co.in", "au", "com.au",
        "net.au", "org.au", "nz", "co.nz", "br", "com.br", "ca", "mx", "com.mx", "kr", "co.kr", "za", "co.za", "tw", "com.tw",
        "hk", "com.hk", "sg", "com.sg", "github.io", "gitlab.io", "herokuapp.com", "appspot.com", "cloudfront.net",
        "amazonaws.com", "azurewebsites.net", "vercel.app", "netlify.app", "pages.dev", "workers.dev", "fly.dev", "onrender.com",
        "firebaseapp.com", "web.app", "blogspot.com", "local", "localhost", "test", "example", "invalid", "internal",
        // Service infrastructure a sibling service could otherwise set cookies for.
        "cluster.local", "svc.cluster.local", "svc", "consul", "service.consul", "node.consul", "ec2.internal",
        "compute.internal", "elb.amazonaws.com", "s3.amazonaws.com", "com.tr", "edu.au", "gov.au", "ac.jp", "go.jp", "ac.kr",
    ]

    /// The most cookies one answer may set, and the longest attribute value read.
    static let maxCookiesPerAnswer = 50
    static let maxAttributeBytes = 1024

    /// The `Set-Cookie` fields in one line that a library joined with commas (URLSession's
    /// `HTTPURLResponse` keeps one value per name): a comma starts a new cookie where the text after
    /// it, up to the next `;` or `,`, is `name=…` with a name that holds no space. (A cookie value
    /// holds no comma; the comma of an `Expires` date is followed by a day, not by `name=`.)
    static func split(_ line: String) -> [String] {
        guard line.contains(",") else { return [line] }
        var fields: [String] = []
        var current = ""
        let characters = Array(line)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character == "," {
                let rest = characters[(index + 1)...].prefix { $0 != ";" && $0 != "," }
                let text = String(rest).trimmingCharacters(in: .whitespaces)
                if let equals = text.firstIndex(of: "="), equals != text.startIndex, !text[..<equals].contains(" ") {
                    fields.append(current)
                    current = ""
                    index += 1
                    continue
                }
            }
            current.append(character)
            index += 1
        }
        fields.append(current)
        return fields.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    static func parse(_ field: String, for target: CookieTarget, now: ContinuousClock.Instant, wallNow: Int64) -> CookieJar.Cookie? {
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
            if publicSuffixes.contains(domain) || !domain.contains(".") {
                // A public suffix is taken only as the host itself (then host-only).
                guard domain == target.host else { return nil }
            } else {
                guard target.domainMatches(domain) else { return nil }
                hostOnly = target.host == domain && target.isAddress
                cookieDomain = domain
                if target.isAddress { hostOnly = true }
            }
            if domain != target.host { hostOnly = false }
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
            isHTTPOnly: httpOnly, expires: expires, created: 0, used: 0)
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
