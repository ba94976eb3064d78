import HTTPTypes
import Logging

/// The parts ``RequestContext`` stores, each one concept; its public properties read them.
extension RequestContext {
    /// Who the call is: its id, its team, its endpoint's name.
    struct Identity: Sendable {
        var requestID: String
        var team: String?
        var endpointName: String?
    }

    /// The call's limits, from the configuration or its endpoint.
    struct CallLimits: Sendable {
        var connectTimeout: Duration = .seconds(10)
        var maxResponseBytes: Int
        var responseHeadLimits = ResponseHeadLimits()
        var maxRedirects = 10
    }

    /// Which request headers are secret or the call's own, and whether a redirect has crossed
    /// origins: what decides where each header may go.
    struct HeaderScope: Sendable {
        /// Lowercase (``RequestContext/secretHeaderNames`` keeps them so).
        var secretHeaderNames: Set<String>
        var ownHeaderNames: Set<HTTPField.Name> = []
        var hasCrossedOrigin = false

        /// Keeps ``secretHeaderNames`` lowercase: they are compared with lowercase field names.
        mutating func lowercaseSecretNames() {
            if secretHeaderNames.contains(where: CredentialScope.hasUppercase) {
                secretHeaderNames = Set(secretHeaderNames.map { $0.lowercased() })
            }
        }
    }

    /// The call's logger, and whether reading it adds the request id (in the client's own contexts).
    struct CallLogging: Sendable {
        var logger: Logger
        var addsRequestID: Bool
    }

    /// What the call asks of the transport and the cache.
    struct Preferences: Sendable {
        var httpVersion: HTTPVersionPreference?
        var cachePolicy: CachePolicy = .useProtocol
    }
}
