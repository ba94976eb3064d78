import Courier
import Foundation
import HTTPTypes
import Logging

/// The response cache's link around each hop (a wing's hop link, see `LinkChain`): below follow-up
/// (each redirect hop is looked up and stored under its own URL) and the cookie jar, above the
/// bridge (bodies are stored decoded, and a hit never waits for a queue slot or reaches the
/// transport). Present only in a client whose configuration has a cache.
struct CacheLink: Middleware {
    /// The client's cache.
    let cache: ResponseCache
    /// Whether network middleware run below: they may add credentials the key cannot see, so only
    /// `public` answers are stored (`LinkChain` sets it).
    let networkMiddlewareBelow: Bool

    /// The fields that make a request conditional or partial: the caller's own business, so such a
    /// request passes the cache untouched.
    private static let callerConditions: [HTTPField.Name] = [
        .ifNoneMatch, .ifModifiedSince, .ifMatch, .ifUnmodifiedSince, .ifRange, .range,
    ]

    /// The errors after which a stale response may stand in (a transport could not get an answer);
    /// not cancellation, not the call's deadline, not a body that was too large.
    private static let outageKinds: Set<NetworkError.Kind> = [
        .dnsFailure, .connectFailure, .connectionClosed, .tlsFailure, .invalidResponse, .transportFailure,
    ]

    func intercept(_ request: HTTPRequest, body: RequestBody?, context: RequestContext, next: @escaping Middleware.Next) async throws
        -> TransportResponse
    {
        try await Self.run(request, body, context, cache: cache, networkMiddlewareBelow: networkMiddlewareBelow, next: next)
    }

    static func run(
        _ request: HTTPRequest, _ body: RequestBody?, _ context: RequestContext, cache: ResponseCache, networkMiddlewareBelow: Bool,
        next: @escaping Middleware.Next
    ) async throws -> TransportResponse {
        let method = request.method
        guard method == .get || method == .head else {
            let response = try await next(request, body, context)
            if StoringRules.invalidates(method: method, status: response.head.status.code) {
                for stored in [HTTPRequest.Method.get, .head] {
                    cache.store.remove(key(for: request, method: stored, in: cache, context: context))
                    cache.store.remove(request.describedURL(after: stored == .get ? "GET " : "HEAD "))
                }
            }
            return response
        }
        if callerConditions.contains(where: { request.headerFields[$0] != nil }) {
            if context.cachePolicy == .cacheOnly { throw NetworkError.notCached(request, why: "the request is conditional or partial") }
            return try await next(request, body, context)
        }
        var lookup = Lookup(request: request, cache: cache, context: context, networkMiddlewareBelow: networkMiddlewareBelow)
        // Calls that would go to the network for the same key wait for the one already going, then
        // look again: many callers of one stale entry cause one revalidation.
        let shares: Bool
        switch context.cachePolicy {
        case .useProtocol, .staleIfError:
            if let stored = lookup.stored, !lookup.isFresh(stored), lookup.mayServeWhileRevalidating(stored) {
                // `stale-while-revalidate`: the stale response now, a revalidation in the background.
                lookup.revalidateInBackground(stored, next: next)
                return lookup.serve(stored, as: .stale)
            }
            shares = lookup.stored.map { !lookup.isFresh($0) } ?? true
        case .returnCacheElseLoad: shares = lookup.stored == nil
        case .cacheOnly, .reloadIgnoringCache, .revalidateAlways: shares = false
        }
        if shares {
            if await cache.loads.lead(lookup.key, context: context) {
                defer { cache.loads.finish(lookup.key) }
                return try await respond(lookup, body: body, next: next)
            }
            lookup = Lookup(request: request, cache: cache, context: context, networkMiddlewareBelow: networkMiddlewareBelow)
        }
        return try await respond(lookup, body: body, next: next)
    }

    /// The answer for a call under its policy: from the store, or from the network.
    private static func respond(_ lookup: Lookup, body: RequestBody?, next: Middleware.Next) async throws -> TransportResponse {
        let request = lookup.request
        switch lookup.context.cachePolicy {
        case .cacheOnly:
            guard let stored = lookup.stored else { throw NetworkError.notCached(request, why: "nothing usable is stored") }
            return lookup.serve(stored, as: lookup.isFresh(stored) ? .hit : .stale)
        case .returnCacheElseLoad:
            if let stored = lookup.stored { return lookup.serve(stored, as: lookup.isFresh(stored) ? .hit : .stale) }
            return try await lookup.load(body: body, revalidating: nil, next: next)
        case .reloadIgnoringCache:
            return try await lookup.load(body: body, revalidating: nil, next: next)
        case .revalidateAlways:
            return try await lookup.load(body: body, revalidating: lookup.stored, next: next)
        case .useProtocol, .staleIfError:
            if let stored = lookup.stored, lookup.isFresh(stored) { return lookup.serve(stored, as: .hit) }
            return try await lookup.load(body: body, revalidating: lookup.stored, next: next)
        }
    }

    /// The key a request's response is stored under: the method, the URL, and for a request with
    /// credentials (any header of `CredentialScope`), their fingerprint keyed with the cache's
    /// own random secret, so other credentials never match and the key never holds them.
    static func key(for request: HTTPRequest, method: HTTPRequest.Method, in cache: ResponseCache, context: RequestContext) -> String {
        var key = request.describedURL(after: method == .get ? "GET " : method.rawValue + " ")
        if let fingerprint = CredentialScope.fingerprint(
            of: request.headerFields, secretNames: context.secretHeaderNames, key: cache.credentialKey)
        {
            key += credentialsMark + fingerprint
        }
        return key
    }

    /// What precedes the credentials' fingerprint in a key.
    static let credentialsMark = " credentials:"

    /// One call's look at the cache: what is stored for it, and the clock.
    struct Lookup: Sendable {
        let request: HTTPRequest
        let cache: ResponseCache
        var context: RequestContext
        let key: String
        let requestControl: CacheControl
        /// The stored response, when its `Vary` fields match the request.
        let stored: CachedResponse?
        /// Whether network middleware run below (see ``CacheLink/networkMiddlewareBelow``).
        let networkMiddlewareBelow: Bool

        init(request: HTTPRequest, cache: ResponseCache, context: RequestContext, networkMiddlewareBelow: Bool) {
            self.request = request
            self.networkMiddlewareBelow = networkMiddlewareBelow
            self.cache = cache
            self.context = context
            key = CacheLink.key(for: request, method: request.method, in: cache, context: context)
            requestControl = CacheControl(fields: request.headerFields[values: .cacheControl])
            let found = cache.store.response(for: key)
            stored = found.flatMap { $0.vary.map { vary in vary.matches(request.headerFields, key: cache.varyKey) } ?? true ? $0 : nil }
        }

        var now: Int64 { WallClock.seconds(on: context.clock) }

        func isFresh(_ stored: CachedResponse) -> Bool {
            stored.freshness.isFresh(now: now, request: requestControl)
        }

        /// Whether the response's `stale-while-revalidate` still covers it (never for a request
        /// that asked for `no-cache` or a fresh answer with `max-age`).
        func mayServeWhileRevalidating(_ stored: CachedResponse) -> Bool {
            guard let window = stored.freshness.control.staleWhileRevalidate, !requestControl.noCache, requestControl.maxAge == nil,
                !stored.freshness.control.mustRevalidate, !stored.freshness.control.noCache
            else { return false }
            return stored.freshness.staleness(now: now) <= window
        }

        /// The longest a background revalidation may take.
        static let backgroundLimit: Duration = .seconds(30)

        /// Revalidates `stored` in a task of its own, unless a load of the key is under way: the
        /// caller has its answer already. The task is bounded by ``backgroundLimit`` on the call's
        /// clock; whatever it gets is stored by the usual rules, and a failure leaves the stale
        /// response in place.
        func revalidateInBackground(_ stored: CachedResponse, next: @escaping Middleware.Next) {
            guard cache.loads.tryLead(key) else { return }
            // A part of the call with its own record (the caller's metrics are final once it has
            // its answer) and no progress (nor are its bytes the caller's).
            var copy = self
            copy.context = context.forPartOfCall()
            let background = copy
            let clock = context.clock
            let deadline = clock.now.advanced(by: Self.backgroundLimit)
            Task {
                defer { background.cache.loads.finish(background.key) }
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        guard let response = try? await background.load(body: nil, revalidating: stored, next: next) else { return }
                        // The body must be read for a streamed response to be stored.
                        await FollowUpLink.drain(response.body, upTo: background.cache.maxEntryBytes)
                    }
                    group.addTask { _ = await clock.sleep(until: deadline) }
                    await group.next()
                    group.cancelAll()
                }
            }
        }

        /// The stored response as the answer.
        func serve(_ stored: CachedResponse, as result: RequestMetrics.CacheResult) -> TransportResponse {
            let age = stored.freshness.currentAge(now: now)
            var head = HTTPResponse(status: HTTPResponse.Status(code: stored.status))
            head.headerFields = stored.headerFields
            head.headerFields[.age] = String(age)
            record(result, age: age)
            return TransportResponse(head: head, body: request.method == .head ? .empty : ResponseBody(data: stored.body))
        }

        private func record(_ result: RequestMetrics.CacheResult, age: Int64?) {
            context.recorder.update { metrics in
                metrics.cache = result
                metrics.cacheAge = age.map { .seconds($0) }
            }
            context.debugLogger?.debug(
                "courier.cache.\(result.rawValue)",
                metadata: [
                    "courier.request_id": .string(context.requestID),
                    "courier.url": .string(Redaction.redactedURL(request.urlText)),
                    "courier.cache.age": .string(age.map { String($0) } ?? "-"),
                ])
        }

        /// Sends the request (made conditional on `revalidating`'s validators, if it has any),
        /// then serves, updates or stores what comes back.
        func load(body: RequestBody?, revalidating: CachedResponse?, next: Middleware.Next) async throws -> TransportResponse {
            var sent = request
            var conditional = false
            if let revalidating {
                if let tag = revalidating.headerFields[.eTag] {
                    sent.headerFields[.ifNoneMatch] = tag
                    conditional = true
                }
                if let modified = revalidating.headerFields[.lastModified] {
                    sent.headerFields[.ifModifiedSince] = modified
                    conditional = true
                }
            }
            let requestTime = now
            let response: TransportResponse
            do {
                response = try await next(sent, body, context)
            } catch let error as NetworkError where CacheLink.outageKinds.contains(error.kind) && !context.isCancelled {
                if let stand = standIn() { return stand }
                throw error
            }
            let status = response.head.status.code
            if status == 304, conditional, let revalidating {
                await FollowUpLink.drain(response.body)
                let updated = Self.updated(revalidating, with: response.head.headerFields, requestTime: requestTime, responseTime: now)
                cache.store.store(updated)
                var served = serve(updated, as: .revalidated)
                // The 304's own cookies are this call's, not the stored answer's.
                served.head.headerFields.append(contentsOf: response.head.headerFields.filter { CredentialScope.isCallerOnly($0.name) })
                return served
            }
            if (500...599).contains(status), let stand = standIn() {
                await FollowUpLink.drain(response.body)
                return stand
            }
            return store(response, requestTime: requestTime)
        }

        /// The stored response, when the network or the server failed and the policy (or the
        /// stored response's own `stale-if-error`) lets a stale one stand in.
        private func standIn() -> TransportResponse? {
            guard let stored, context.cachePolicy != .reloadIgnoringCache, !stored.freshness.control.mustRevalidate,
                !stored.freshness.control.noCache
            else { return nil }
            let allowed: Int64?
            switch context.cachePolicy {
            case .staleIfError(let maxStale): allowed = max(maxStale.components.seconds, stored.freshness.control.staleIfError ?? 0)
            default: allowed = stored.freshness.control.staleIfError
            }
            guard let allowed, stored.freshness.staleness(now: now) <= allowed else { return nil }
            return serve(stored, as: .stale)
        }

        /// A `304`'s fields replace the stored ones of the same name (RFC 9111 §4.3.4), except the
        /// ones that describe the stored body, and `Set-Cookie`, which a stored answer never holds
        /// (the call that got the `304` still sees it: the cookie step reads the head it returns).
        static func updated(_ stored: CachedResponse, with fields: HTTPFields, requestTime: Int64, responseTime: Int64) -> CachedResponse {
            let kept: Set<HTTPField.Name> = [.contentLength, .contentEncoding, .transferEncoding, .contentRange, .setCookie]
            let names = Set(fields.map(\.name)).subtracting(kept)
            var headerFields = HTTPFields(stored.headerFields.filter { !names.contains($0.name) })
            headerFields.append(contentsOf: fields.filter { names.contains($0.name) })
            return stored.revalidated(headerFields: headerFields, requestTime: requestTime, responseTime: responseTime)
        }

        /// Stores the response when the rules allow it: a body in memory at once, a streamed one
        /// once the caller has read all of it (a body read only in part is never stored).
        private func store(_ response: TransportResponse, requestTime: Int64) -> TransportResponse {
            record(.miss, age: nil)
            let responseTime = now
            let fields = response.head.headerFields
            // A stored answer never sets cookies again: a hit would hand one caller's session to
            // whoever shares the cache.
            let storedFields = CredentialScope.shareable(fields)
            let freshness = StoredFreshness(
                status: response.head.status.code, fields: fields, requestTime: requestTime, responseTime: responseTime)
            let refusal = StoringRules.refusal(
                request: request, requestControl: requestControl, freshness: freshness, responseFields: fields,
                carriesCredentials: key.contains(CacheLink.credentialsMark))
            // Below network middleware the key may lack what was really sent: only what the
            // server said anyone may reuse is stored.
            let unseen = networkMiddlewareBelow && !freshness.control.isPublic
            guard refusal == nil, !unseen, response.body.expectedLength.map({ $0 <= cache.maxEntryBytes }) ?? true else {
                // What was stored is not the current answer any more.
                if stored != nil { cache.store.remove(key) }
                return response
            }
            let vary =
                fields[values: .vary].isEmpty
                ? nil : VaryKey(vary: fields[values: .vary], request: request.headerFields, key: cache.varyKey)
            let entry = { @Sendable (body: Data) in
                CachedResponse(
                    key: key, status: response.head.status.code, headerFields: storedFields, body: body, requestTime: requestTime,
                    responseTime: responseTime, vary: vary)
            }
            if let buffered = try? response.body.bufferedBytes(upTo: cache.maxEntryBytes) {
                cache.store.store(entry(buffered))
                return response
            }
            let store = cache.store
            let copy = BodyCopy(body: response.body, limit: cache.maxEntryBytes) { whole in store.store(entry(whole)) }
            let stream = AsyncThrowingStream<Data, any Error>(unfolding: { try await copy.next() })
            return TransportResponse(head: response.head, body: ResponseBody(stream: stream, expectedLength: response.body.expectedLength))
        }
    }

    /// Passes a streamed body on chunk by chunk and keeps a copy; when the body ends, and was
    /// never larger than `limit`, hands the copy to `finished`.
    ///
    /// `@unchecked Sendable`: a body is read once, by one reader at a time, so `iterator` and
    /// `copy` are never touched concurrently.
    final class BodyCopy: @unchecked Sendable {
        private var iterator: ResponseBody.AsyncIterator
        private var copy = Data()
        private var overflowed = false
        private let limit: Int
        private let finished: @Sendable (Data) -> Void

        init(body: ResponseBody, limit: Int, finished: @escaping @Sendable (Data) -> Void) {
            iterator = body.makeAsyncIterator()
            self.limit = limit
            self.finished = finished
        }

        func next() async throws -> Data? {
            guard let chunk = try await iterator.next() else {
                if !overflowed { finished(copy) }
                overflowed = true
                return nil
            }
            if !overflowed {
                if copy.count + chunk.count <= limit {
                    copy.append(chunk)
                } else {
                    overflowed = true
                    copy = Data()
                }
            }
            return chunk
        }
    }
}
