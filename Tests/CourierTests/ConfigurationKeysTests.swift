import Courier
import CourierCache
import Foundation
import Testing

/// The one table of configuration keys drives the file, the environment, the docs and the errors.
@Suite("Configuration keys")
struct ConfigurationKeysTests {
    @Test("each key is declared once, with a distinct name and environment variable")
    func distinct() {
        let names = ConfigurationKey.all.map(\.name)
        #expect(Set(names).count == names.count)
        let variables = ConfigurationKey.all.map(\.environmentVariable)
        #expect(Set(variables).count == variables.count)
        #expect(ConfigurationKey.queueShedsLateCalls.environmentVariable == "COURIER_QUEUE_SHEDS_LATE_CALLS")
        #expect(ConfigurationKey.baseURL.environmentVariable == "COURIER_BASE_URL")
        #expect(ConfigurationKey.tlsCAPEM.environmentVariable == "COURIER_TLS_CA_PEM")
        #expect(ConfigurationKey.retry.environmentVariable == "COURIER_RETRY_ENABLED")
        #expect(ConfigurationKey.hedgingMinimumDelay.environmentVariable == "COURIER_RESILIENCE_HEDGING_MINIMUM_DELAY_MS")
    }

    @Test("malformed JSON names the line and column where reading stopped")
    func malformedPosition() throws {
        let json = "{\n  \"maxRedirects\": 3,\n  \"retry\": { \"maxAttempts\": 2,, }\n}"
        let error = #expect(throws: ConfigurationError.self) {
            _ = try ClientConfiguration().applyingJSON(Data(json.utf8), source: "c.json")
        }
        #expect(error?.key == "(file)")
        #expect(error?.line == 3)
        #expect(error?.column != nil)
        #expect(error?.description.contains("c.json:3:") == true)
    }

    @Test(
        "an unknown key names the nearest known one",
        arguments: [
            ("{\"maxRedirect\": 3}", "maxRedirects"),
            ("{\"retry\": {\"maxAtempts\": 2}}", "retry.maxAttempts"),
            ("{\"queue\": {\"shedLateCalls\": true}}", "queue.shedsLateCalls"),
            ("{\"maxAttempts\": 2}", "retry.maxAttempts"),
        ])
    func didYouMean(json: String, suggestion: String) throws {
        let error = #expect(throws: ConfigurationError.self) { _ = try ClientConfiguration().applyingJSON(Data(json.utf8), source: "f") }
        #expect(error?.suggestion == suggestion)
        #expect(error?.description.contains("did you mean '\(suggestion)'") == true)
    }

    @Test("the environment sets every kind of key, after the file, and names the variable in errors")
    func environment() throws {
        let configuration = try ClientConfiguration.load(environment: [
            "COURIER_TRANSPORT": " MOCK ", "COURIER_BASE_URL": "https://env.test", "COURIER_TIMEOUTS_REQUEST": "2.5",
            "COURIER_MAX_REDIRECTS": "3", "COURIER_SECRET_HEADERS": "X-A, X-B", "COURIER_HEADERS": "X-Team: pay, X-Zone: eu",
            "COURIER_RETRY_STATUSES": "500,503", "COURIER_QUEUE_SHEDS_LATE_CALLS": "false",
            "COURIER_RESILIENCE_CIRCUIT_BREAKER_ENABLED": "true",
            "COURIER_HTTP_VERSION": "2", "COURIER_HEADER_RULES": "[{\"team\": \"pay\", \"headers\": {\"X-Id\": \"{requestID}\"}}]",
            "COURIER_CACHE_POLICY": "cacheOnly", "COURIER_UNRELATED": "ignored",
        ])
        #expect(configuration.transport == "mock")
        #expect(configuration.baseURL == "https://env.test")
        #expect(configuration.requestTimeout == .milliseconds(2500))
        #expect(configuration.maxRedirects == 3)
        #expect(configuration.secretHeaderNames.isSuperset(of: ["x-a", "x-b"]))
        #expect(configuration.defaultHeaders.entries.count == 2 && configuration.defaultHeaders["X-Zone"] == "eu")
        #expect(configuration.retry?.retryableStatuses == [500, 503])
        #expect(configuration.queue?.shedsLateCalls == false)
        #expect(configuration.resilience.circuitBreaker != nil)
        #expect(configuration.httpVersion == .http2)
        #expect(configuration.headerRules.count == 1)
        #expect(configuration.cache != nil && configuration.cachePolicy == .cacheOnly)

        let error = #expect(throws: ConfigurationError.self) {
            _ = try ClientConfiguration.load(environment: ["COURIER_RETRY_MAX_ATTEMPTS": "many"])
        }
        #expect(error?.key == "retry.maxAttempts")
        #expect(error?.variable == "COURIER_RETRY_MAX_ATTEMPTS")
        #expect(error?.description.contains("COURIER_RETRY_MAX_ATTEMPTS") == true)
        let range = #expect(throws: ConfigurationError.self) {
            _ = try ClientConfiguration.load(environment: ["COURIER_MAX_REDIRECTS": "51"])
        }
        #expect(range?.key == "maxRedirects")
    }

    @Test("the environment wins over the file")
    func environmentOverFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-keys-\(UInt64.random(in: 0...UInt64.max)).json")
            .path
        try Data("{\"maxRedirects\": 4, \"timeouts\": {\"connect\": 3}}".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let configuration = try ClientConfiguration.load(environment: ["COURIER_CONFIG": path, "COURIER_MAX_REDIRECTS": "7"])
        #expect(configuration.maxRedirects == 7)
        #expect(configuration.connectTimeout == .seconds(3))
    }

    @Test("the documentation's key list is the table's")
    func documentation() throws {
        let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/Courier/Courier.docc/ConfigurationKeys.md")
        let text = try String(contentsOf: article, encoding: .utf8)
        let marker = "## Keys\n\n"
        let head = try #require(text.components(separatedBy: marker).first)
        let expected = head + marker + ConfigurationKey.markdownTable
        if ProcessInfo.processInfo.environment["COURIER_UPDATE_DOCS"] == "1" {
            try expected.write(to: article, atomically: true, encoding: .utf8)
        }
        #expect(text == expected, "the key list is out of date: run with COURIER_UPDATE_DOCS=1 to rewrite it")
    }

    @Test("the environment's cache policy keeps a file's store; a section turned off stays off")
    func environmentOverSections() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-env-cache-\(UInt64.random(in: 0...UInt64.max))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.path + ".json"
        try Data("{\"cache\": {\"directory\": \"\(directory.path)\", \"policy\": \"staleIfError\"}, \"retry\": {}}".utf8)
            .write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let kept = try ClientConfiguration.load(environment: ["COURIER_CONFIG": path, "COURIER_CACHE_MAX_STALE": "40"])
        #expect(kept.cache?.store is DiskCacheStore)
        #expect(kept.cachePolicy == .staleIfError(maxStale: .seconds(40)))
        let policy = try ClientConfiguration.load(environment: ["COURIER_CONFIG": path, "COURIER_CACHE_POLICY": "cacheOnly"])
        #expect(policy.cache?.store is DiskCacheStore && policy.cachePolicy == .cacheOnly)
        let off = try ClientConfiguration.load(environment: [
            "COURIER_CONFIG": path, "COURIER_CACHE_ENABLED": "false", "COURIER_RETRY_ENABLED": "false", "COURIER_RETRY_MAX_ATTEMPTS": "2",
        ])
        #expect(off.cache == nil)
        #expect(off.retry == nil)
    }

    @Test("headers from the environment: a JSON object for values with commas; a later source replaces a header")
    func environmentHeaders() throws {
        var defaults = ClientConfiguration()
        defaults.defaultHeaders.add("X-Team", "code")
        let configuration = try ClientConfiguration.load(
            environment: ["COURIER_HEADERS": #"{"X-Team": "env", "Cache-Control": "no-cache, no-store"}"#], defaults: defaults)
        #expect(configuration.defaultHeaders.entries.filter { $0.name == "X-Team" }.map(\.value) == ["env"])
        #expect(configuration.defaultHeaders["cache-control"] == "no-cache, no-store")
        let secret = #expect(throws: ConfigurationError.self) {
            _ = try ClientConfiguration.load(environment: ["COURIER_HEADER_RULES": #"[{"headers": {"Authorization": "Bearer sk-1"#])
        }
        #expect(secret?.key == "headerRules" && secret?.value == nil)
        #expect(secret?.description.contains("sk-1") == false)
    }

    @Test("a range error names the environment variable its value came from; null leaves a key as it was")
    func validationNamesTheVariable() throws {
        let error = #expect(throws: ConfigurationError.self) {
            _ = try ClientConfiguration.load(environment: ["COURIER_TIMEOUTS_REQUEST": "0"])
        }
        #expect(error?.key == "timeouts.request")
        #expect(error?.source == "environment" && error?.variable == "COURIER_TIMEOUTS_REQUEST")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-keys-null-\(UInt64.random(in: 0...UInt64.max)).json")
        try Data(#"{"timeouts": {"stall": null}, "retry": null, "maxRedirects": null, "headerRules": [{"team": null}]}"#.utf8).write(
            to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let nulls = try ClientConfiguration.load(environment: ["COURIER_CONFIG": file.path])
        #expect(nulls.stallTimeout == nil && nulls.retry == nil && nulls.maxRedirects == 10 && nulls.headerRules.count == 1)
    }

    @Test("every typed key's documented default is the value a default configuration has")
    func documentedDefaults() {
        var checked = 0
        for key in ConfigurationKey.all {
            guard let current = key.current, let value = current(ClientConfiguration()) else { continue }
            #expect(value == key.defaultValue, "\(key.name): the docs say \(key.defaultValue), the default is \(value)")
            checked += 1
        }
        #expect(checked >= 30)
    }

    @Test("a value out of the key table's range fails naming its key, from a file, from code, or as NaN")
    func tableRanges() throws {
        let cases: [(String, String)] = [
            (#"{"responseHead": {"maxBytes": 100}}"#, "responseHead.maxBytes"),
            (#"{"decompression": {"maxRatio": 1}}"#, "decompression.maxRatio"),
            (#"{"decompression": {"maxCodings": 9}}"#, "decompression.maxCodings"),
            (#"{"timeouts": {"request": 0}}"#, "timeouts.request"),
            (#"{"retry": {"baseDelay": 0}}"#, "retry.baseDelay"),
            (#"{"resilience": {"circuitBreaker": {"failureRatio": 0}}}"#, "resilience.circuitBreaker.failureRatio"),
        ]
        for (json, key) in cases {
            let error = #expect(throws: ConfigurationError.self) {
                try ClientConfiguration().applyingJSON(Data(json.utf8), source: "test").validate(source: "test")
            }
            #expect(error?.key == key, "\(json): \(String(describing: error))")
        }
        var budget = RetryBudget()
        budget.share = .nan
        #expect(throws: ConfigurationError.self) { try budget.validate() }
        var limits = ResponseHeadLimits()
        limits.maxFields = 0
        let error = #expect(throws: ConfigurationError.self) { try limits.validate() }
        #expect(error?.key == "responseHead.maxFields" && error?.allowed == "1 to 10000")
        var hedging = HedgingPolicy()
        hedging.minimumDelay = .seconds(-1)
        #expect((try? hedging.validate()) == nil)
    }

    @Test("a JSON value is read as JSONSerialization makes it; anything else is refused, never a silent null")
    func valuesFromJSON() throws {
        let parsed = try JSONSerialization.jsonObject(with: Data(#"{"a": [1, true, "x", null], "b": {"c": 2.5}}"#.utf8))
        guard case .object(let fields)? = ConfigurationValue(json: parsed), case .list(let list)? = fields["a"] else {
            Issue.record("not an object with a list")
            return
        }
        #expect(list.count == 4)
        if case .number(let number) = list[0] { #expect(number == 1) } else { Issue.record("\(list[0])") }
        if case .flag(let flag) = list[1] { #expect(flag) } else { Issue.record("\(list[1])") }
        if case .text(let text) = list[2] { #expect(text == "x") } else { Issue.record("\(list[2])") }
        if case .null = list[3] {} else { Issue.record("\(list[3])") }
        // What JSONSerialization never makes: refused, alone or nested.
        #expect(ConfigurationValue(json: Date()) == nil)
        #expect(ConfigurationValue(json: ["ok", Date()] as [Any]) == nil)
        #expect(ConfigurationValue(json: ["key": URL(fileURLWithPath: "/")] as [String: Any]) == nil)
        // A boxed optional, as a literal with `nil` values makes: nil is a null, a value itself.
        let boxed: [String: Any] = ["none": String?.none as Any, "some": String?.some("x") as Any]
        guard case .object(let boxedFields)? = ConfigurationValue(json: boxed) else {
            Issue.record("a boxed optional refused")
            return
        }
        if case .null? = boxedFields["none"] {} else { Issue.record("\(String(describing: boxedFields["none"]))") }
        if case .text("x")? = boxedFields["some"] {} else { Issue.record("\(String(describing: boxedFields["some"]))") }
    }
}
