/// What `print`, string interpolation, `debugPrint` and `dump` show of a configuration: the
/// settings, never a secret. Header values are shown only for headers that are not credentials
/// (``CredentialScope``, the configuration's secret names, secret header rules); the base URL
/// without user info or token-like query values; TLS as the names of the fields that are set.
extension ClientConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        var parts: [String] = []
        parts.append("baseURL: \(baseURL.map { Redaction.redactedURL($0) } ?? "none")")
        parts.append("transport: \(transport ?? "default")")
        parts.append("requestTimeout: \(requestTimeout)")
        parts.append("connectTimeout: \(connectTimeout)")
        parts.append("maxResponseBytes: \(maxResponseBytes)")
        parts.append("maxRedirects: \(maxRedirects)")
        if !defaultHeaders.entries.isEmpty {
            parts.append("defaultHeaders: [\(defaultHeaders.redactedDescription(secretNames: secretHeaderNames))]")
        }
        if !secretHeaderNames.isEmpty { parts.append("secretHeaderNames: \(secretHeaderNames.sorted())") }
        if !headerRules.isEmpty { parts.append("headerRules: \(headerRules.count)") }
        if let httpVersion { parts.append("httpVersion: \(httpVersion)") }
        if !tls.setKeys.isEmpty { parts.append("tls: \(tls.setKeys)") }
        if !proxy.isNone {
            let servers = [proxy.httpProxy, proxy.httpsProxy].map { $0.map(\.description) ?? "direct" }
            parts.append("proxy: http \(servers[0]), https \(servers[1]), noProxy \(proxy.noProxy.map(\.description))")
        }
        if let socket = connectionOverrides.unixSocket { parts.append("unixSocket: \(socket)") }
        if !connectionOverrides.addresses.isEmpty {
            parts.append("addresses: \(connectionOverrides.addresses.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })")
        }
        if json != JSONCoding() { parts.append("json: dates \(json.dates.rawValue), keys \(json.keys.rawValue)") }
        for wing in linkedWings { parts += wing.describe(self) }
        if retry != nil { parts.append("retry: on") }
        if queue != nil { parts.append("queue: on") }
        if logsResponseBodies { parts.append("logsResponseBodies: true") }
        return "ClientConfiguration(" + parts.joined(separator: ", ") + ")"
    }

    public var debugDescription: String { description }

    /// One child, the redacted ``description``: `dump` shows no stored secret.
    public var customMirror: Mirror { Mirror(self, children: ["redacted": description], displayStyle: .struct) }
}

extension RequestHeaders: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `Name: value` pairs with every credential's value replaced by ``Redaction/placeholder``.
    public var description: String { "[" + redactedDescription(secretNames: []) + "]" }

    public var debugDescription: String { description }

    /// One child, the redacted ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["redacted": description], displayStyle: .struct) }

    /// The headers as `Name: value` pairs, credentials redacted.
    func redactedDescription(secretNames: Set<String>) -> String {
        entries.map { entry in
            let secret = Redaction.isSensitiveHeader(entry.name, extraSecretNames: secretNames)
            return "\(entry.name): \(secret ? Redaction.placeholder : entry.value)"
        }.joined(separator: ", ")
    }
}
