import CPSL
import Courier

/// The domains under which different owners hold names, so a cookie set for one of them would reach
/// strangers: the whole Public Suffix List as curl reads it (libpsl: the newer of its built-in copy
/// and the system's `/usr/share/publicsuffix`), plus rules for service infrastructure the list does
/// not name.
///
/// A ``CookieJar`` refuses a `Domain` attribute that is a public suffix (unless it is the host
/// itself), and caps cookies per *site*, the public suffix plus one label (`shop.example.co.uk`'s
/// site is `example.co.uk`).
///
/// ```swift
/// configuration.cookieSuffixes = ["*.tenants.acme.internal"]
/// ```
public struct PublicSuffixes: Sendable, Equatable {
    /// Rules for names that service infrastructure hands to different owners and the list does not
    /// hold: each Kubernetes namespace (`payments.svc.cluster.local`), each Consul datacenter's
    /// service, node, query, connect, ingress and virtual names (`service.dc1.consul`), each EC2
    /// region's instance names (`us-west-2.compute.internal`), each Google Cloud project's zones
    /// (`us-central1-a.c.project.internal`).
    public static let infrastructureRules = [
        "cluster.local", "svc.cluster.local", "*.svc.cluster.local", "pod.cluster.local", "*.pod.cluster.local", "svc", "*.svc", "consul",
        "*.consul", "service.*.consul", "node.*.consul", "query.*.consul", "connect.*.consul", "ingress.*.consul",
        "virtual.*.consul", "internal", "compute.internal", "*.compute.internal", "ec2.internal", "c.*.internal", "*.c.*.internal",
    ]

    /// The list plus ``infrastructureRules``: what a client's jar uses by default.
    public static let standard = PublicSuffixes()

    /// The most labels one rule may have, and the longest rule.
    static let maxLabels = 16
    static let maxRuleBytes = 253

    /// The rules besides the list's, lowercased, each as its labels from the right (`*` matches any
    /// one label).
    private let rules: [[Substring]]

    /// The list's suffixes plus ``infrastructureRules`` and `extraRules`.
    /// - Parameter extraRules: More suffixes (`tenants.acme.internal`), where `*` stands for any one
    ///   label (`*.tenants.acme.internal`: every tenant's name is a suffix).
    /// - Throws: `ConfigurationError` naming a rule that is not dot-separated labels of letters,
    ///   digits, `-` and `_`, or `*`, or one whose last label or every label is `*` (it would make
    ///   every name a suffix).
    public init(extraRules: [String] = []) throws(ConfigurationError) {
        for rule in extraRules where !Self.isValidRule(rule) {
            throw ConfigurationError(
                key: "cookieSuffixes", value: rule, allowed: "dot-separated labels of letters, digits, `-`, `_` or `*`, not ending in `*`",
                source: "code")
        }
        self.init(rules: Self.infrastructureRules + extraRules)
    }

    private init() {
        self.init(rules: Self.infrastructureRules)
    }

    private init(rules: [String]) {
        self.rules = rules.map { $0.lowercased().split(separator: ".").reversed() }
    }

    /// Whether `rule` is one a jar can read.
    static func isValidRule(_ rule: String) -> Bool {
        let labels = rule.split(separator: ".", omittingEmptySubsequences: false)
        return rule.utf8.count <= maxRuleBytes && labels.count <= maxLabels && labels.last != "*"
            && labels.allSatisfy { label in
                label == "*"
                    || (!label.isEmpty
                        && label.utf8.allSatisfy { $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
            }
    }

    /// Whether `domain` is a public suffix, which a cookie's `Domain` attribute may not name (unless
    /// it is the host itself): by the list, by a rule, or as a single label. `domain` is
    /// lowercased, without leading or trailing dots.
    public func isPublicSuffix(_ domain: String) -> Bool {
        guard domain.contains(".") else { return true }
        if matchesExtraRule(domain) { return true }
        guard let list = PublicSuffixList.shared else { return true }  // no list: every domain counts as one
        return domain.withCString { psl_is_public_suffix2(list.context, $0, PSL_TYPE_ANY) } != 0
    }

    /// The site a host belongs to: its public suffix and one more label, or the host itself when it
    /// is a suffix or an IP address.
    public func site(of host: String) -> String {
        guard host.contains("."), !Self.isAddress(host) else { return host }
        // The shortest name under the host that is not a suffix, by any rule.
        let labels = host.split(separator: ".")
        for count in 1...labels.count {
            let candidate = labels.suffix(count).joined(separator: ".")
            if !isPublicSuffix(candidate) { return candidate }
        }
        return host
    }

    /// Whether a host is an IP address, not a name: an IPv6 literal, or a last label of digits
    /// only (no top-level domain is numeric). The one rule the jar's matching and caps read.
    static func isAddress(_ host: String) -> Bool {
        host.hasPrefix("[") || host.split(separator: ".").last.map { $0.utf8.allSatisfy(\.isASCIIDigit) } == true
    }

    private func matchesExtraRule(_ domain: String) -> Bool {
        let labels = Array(domain.split(separator: ".").reversed())
        return rules.contains { rule in
            rule.count == labels.count && zip(rule, labels).allSatisfy { $0 == "*" || $0 == $1 }
        }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rules == rhs.rules }
}

/// libpsl's list, loaded once per process: read-only, so one context serves every thread.
private final class PublicSuffixList: @unchecked Sendable {
    let context: OpaquePointer

    static let shared: PublicSuffixList? = {
        // The newer of the built-in list and the system's file; the built-in one when the file is missing.
        if let loaded = psl_latest(nil) { return PublicSuffixList(context: loaded) }
        return psl_builtin().map { PublicSuffixList(context: $0) }
    }()

    private init(context: OpaquePointer) {
        self.context = context
    }
}

extension UInt8 {
    fileprivate var isASCIIDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
    fileprivate var isASCIILetterOrDigit: Bool {
        isASCIIDigit || (self | 0x20 >= UInt8(ascii: "a") && self | 0x20 <= UInt8(ascii: "z"))
    }
}
