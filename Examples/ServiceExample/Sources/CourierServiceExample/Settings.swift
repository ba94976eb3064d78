import Configuration
import Courier
import CourierConfiguration
import Logging

/// The example's settings, read from one `ConfigReader` (environment variables over the defaults
/// below). Each key and its environment variable:
///
/// | key | variable | default |
/// | --- | --- | --- |
/// | `http.host` | `HTTP_HOST` | `127.0.0.1` |
/// | `http.port` | `HTTP_PORT` | `8080` (`0` picks a free port) |
/// | `downstream.url` | `DOWNSTREAM_URL` | none: the loopback test server is started in process |
/// | `shutdown.grace` | `SHUTDOWN_GRACE` | `10` seconds for running calls at shutdown |
/// | `log.level` | `LOG_LEVEL` | `info` |
/// | `courier.*` | `COURIER_*` | every Courier key, such as `COURIER_TRANSPORT=urlsession` |
struct Settings {
    /// Where the downstream APIs live, if not on the in-process loopback server.
    var downstreamURL: String?
    /// How long running downstream calls may finish at shutdown.
    var gracePeriod: Duration
    /// The level of every logger.
    var logLevel: Logger.Level

    /// The reader every part of the service reads from.
    static func reader() -> ConfigReader {
        ConfigReader(providers: [
            EnvironmentVariablesProvider(),
            InMemoryProvider(values: [
                "http.host": "127.0.0.1",
                "http.port": 8080,
                "shutdown.grace": 10,
                "log.level": "info",
                "courier.transport": "curl",
            ]),
        ])
    }

    /// Reads the example's own keys; a bad value is an error that names its key.
    init(reader: ConfigReader) throws {
        downstreamURL = reader.string(forKey: "downstream.url")
        let grace = try reader.requiredInt(forKey: "shutdown.grace")
        guard (0...600).contains(grace) else { throw SettingsError(key: "shutdown.grace", allowed: "0 to 600 seconds") }
        gracePeriod = .seconds(grace)
        let level = try reader.requiredString(forKey: "log.level")
        guard let parsed = Logger.Level(rawValue: level) else {
            throw SettingsError(key: "log.level", allowed: Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))
        }
        logLevel = parsed
    }

    /// Courier's configuration: the `courier` keys, with the downstream URL as the base URL
    /// unless `courier.baseURL` says otherwise.
    func clientConfiguration(reader: ConfigReader, baseURL: String, logger: Logger) throws -> ClientConfiguration {
        var defaults = ClientConfiguration(baseURL: baseURL)
        defaults.logger = logger
        return try ClientConfiguration(reader: reader.scoped(to: "courier"), defaults: defaults)
    }
}

/// A setting of the example with a value it cannot use.
struct SettingsError: Error, CustomStringConvertible {
    var key: String
    var allowed: String
    var description: String { "configuration key \(key): allowed values are \(allowed)" }
}
