import Courier
import Foundation
import HTTPTypes
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// How `NetworkClient.download(_:to:options:)` fetches a body into a file.
public struct DownloadOptions: Sendable, Hashable {
    /// Whether a download cut off part-way is resumed with `Range` and `If-Range` (when the first
    /// answer had a strong `ETag` or a `Last-Modified`); `true` by default.
    public var resumes = true
    /// The most resumptions of one download: 3 by default.
    public var maxResumes = 3
    /// The SHA-256 the whole file must have, as 64 hex digits; `nil` (the default) checks none.
    public var sha256: String?
    /// The largest file the download takes, over all its connections (a resumed download counts the
    /// bytes it has): 16 GiB by default, the most a call allows. The file's size, not memory: the
    /// body goes to disk as it arrives.
    public var maxBytes = ClientConfiguration.maxResponseBytesRange.upperBound
    /// The longest the whole download may take, over all its connections; `nil` (the default) sets
    /// no total. Either way each connection's head must come within the endpoint's timeout (or
    /// `ClientConfiguration.requestTimeout`), and its body fails when no byte arrives for
    /// `NetworkClient.bodyStallLimit`: a download that keeps receiving is never cut by the
    /// request timeout.
    public var maxDuration: Duration?
    /// The permission bits a new destination file gets: `0o600` (only its owner reads it) by
    /// default. A destination that exists keeps its own mode.
    public var newFileMode: mode_t = 0o600

    /// The defaults.
    public init() {}
}

/// A finished download.
public struct DownloadResult: Sendable {
    /// Where the file is: the destination asked for.
    public var file: URL
    /// Its size in bytes.
    public var bytes: Int64
    /// How often it was resumed part-way (`206`), and how often it started over.
    public var resumed = 0
    /// How often it started over (the server ignored `Range`, or the file changed meanwhile).
    public var restarted = 0
    /// The head of the last answer.
    public var head: HTTPResponse
}

extension NetworkClient {
    /// Fetches an endpoint's body into a file, streaming it to disk: memory stays flat whatever
    /// the size.
    ///
    /// The body goes into a part file beside `destination` (`.<name>.part`, same directory, so the
    /// final rename is atomic; opened without following a link, mode 0600), which replaces
    /// `destination` only once the body is whole and its checksum (``DownloadOptions/sha256``)
    /// matches; `destination` is left as it was until then. The file keeps an existing
    /// destination's mode; a new one gets ``DownloadOptions/newFileMode`` (0600).
    ///
    /// Across runs: when a download fails with bytes written and a validator (the server's strong
    /// `ETag` or `Last-Modified`), the part file stays with a note beside it (`.<name>.part-info`:
    /// a fingerprint of the method and URL, the validator, the total), and the next `download` of
    /// the same URL to the same destination asks for the rest with `Range` and `If-Range`. Both
    /// are removed on success, when the server answers with the whole file (it changed), and
    /// after a failure that says the bytes are wrong (a checksum, another version, a cap). With
    /// ``DownloadOptions/resumes`` off nothing is kept. A crash leaves the part file for the next
    /// run to resume or replace.
    ///
    /// When a connection fails part-way (closed, timed out, cut), the download resumes from the
    /// bytes it has with `Range: bytes=N-` and `If-Range` (the first answer's strong `ETag`, else
    /// its `Last-Modified`), at most ``DownloadOptions/maxResumes`` times, as the one repeat policy
    /// allows (`RepeatPlan`: a request that may go again, `RepeatRule`; the host's retry budget;
    /// the retry policy's backoff, full jitter, on the client's clock; before
    /// ``DownloadOptions/maxDuration`` when it sets one). A `206` whose range starts where the file ends is appended; a `200` (the
    /// server ignored the range, or the file changed) starts over.
    ///
    /// Time: each connection's head comes within the endpoint's timeout; its body is bounded by the
    /// stall limit (`NetworkClient.bodyStallLimit`: no byte for that long fails it as
    /// `timed_out`, and the download resumes), not by the request timeout.
    ///
    /// The download is one call, whatever the number of connections: one request id, one log line
    /// and one report to the observers, whose metrics count every connection's attempt.
    ///
    /// ```swift
    /// var options = DownloadOptions()
    /// options.sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    /// let result = try await client.download(Report(id: 7), to: URL(fileURLWithPath: "/var/data/report.csv"), options: options)
    /// ```
    /// - Parameters:
    ///   - endpoint: The endpoint; its decoder is not used.
    ///   - destination: A file URL.
    ///   - options: Resumption, checksum, size cap.
    /// - Returns: The file, its size, and how often it resumed or started over.
    /// - Throws: `NetworkError`: the call's, `invalid_request` for a destination that is not a
    ///   writable file path, `invalid_response` for a body that fails its checksum or a `206` that
    ///   does not continue the file (another start, or another version of it: a `Content-Range`
    ///   total other than the first answer's length, or an `ETag` or `Last-Modified` other than
    ///   the one `If-Range` sent), never spliced onto the bytes written.
    public func download<E: Endpoint>(
        _ endpoint: E, to destination: URL, options: DownloadOptions = DownloadOptions()
    ) async throws(NetworkError) -> DownloadResult {
        // The endpoint's reporter counts the whole file, across connections (the call itself
        // counts nothing); it gets its last report however the download ends.
        guard destination.isFileURL, !destination.hasDirectoryPath else {
            throw .invalidRequest("the download's destination \(destination) is not a file path")
        }
        if let total = options.maxDuration, total <= .zero {
            throw .invalidRequest("the download's maxDuration is \(total); give a positive duration, or nil for none")
        }
        guard options.newFileMode & ~0o777 == 0 else {
            throw .invalidRequest("the download's newFileMode is \(String(options.newFileMode, radix: 8)); give permission bits (0o600)")
        }
        var meter: ProgressMeter?
        if let reporter = endpoint.progress {
            guard reporter.claim() else { throw ProgressReporter.inUse }
            meter = ProgressMeter(reporter: reporter, batch: nil, clock: configuration.timeSource)
        }
        defer { meter?.finish() }
        meter?.start(sending: 0)
        // Resuming or starting over: the one repeat policy, with the retry policy's backoff.
        var plan = RepeatPlan(endpoint, on: self)
        var partial = try PartialFile.open(for: destination, resource: plan.resource, resumes: options.resumes)
        var download = DownloadRun(options: options, file: partial.handle)
        if let left = partial.left {
            do throws(NetworkError) {
                try download.goOn(from: left, partial: partial)
            } catch {
                partial.abandon(keeping: false)
                throw error
            }
        }
        // Every connection within the download's one end, when it has one (counted from here,
        // after a previous run's bytes were read again); each body within the stall limit.
        let bounds = TransferBounds(stall: bodyStallLimit, end: options.maxDuration.map { now().advanced(by: $0) })
        plan = plan.ending(at: bounds.end)
        // One call for the whole download; each connection is a resume step of it.
        let call = LongCall(StreamingEndpoint(base: endpoint, maxBytes: options.maxBytes), on: self, bounds: bounds)
        do throws(NetworkError) {
            try await receive(into: &download, partial: &partial, call: call, plan: plan, meter: meter)
            try partial.commit(to: destination, mode: options.newFileMode)
        } catch {
            throw call.finish(error) ?? error
        }
        call.finish(nil)
        return download.result(file: destination)
    }

    /// Reads the download's body over as many connections as the repeat policy allows: resuming
    /// from the bytes written after a cut, or from the start after a `416`.
    private func receive(
        into download: inout DownloadRun, partial: inout PartialFile, call: LongCall, plan: RepeatPlan, meter: ProgressMeter?
    ) async throws(NetworkError) {
        var repetitions = 0
        while true {
            do {
                if plan.isPastEnd { throw Self.downloadPastEnd }
                let response = try await call.connect(setting: download.rangeHeaders)
                try download.take(response.head)
                partial.record(validator: download.validator, total: download.total)
                // The file so far (nothing after a restart) and the whole file's size.
                meter?.startReceiving(length: download.expectedSize(announcing: response.body.expectedLength), kept: download.written)
                for try await chunk in response.body {
                    try download.write(chunk)
                    meter?.received(Int64(chunk.count))
                }
                try download.finish()
                return
            } catch {
                let failure = NetworkError.converting(error, phase: .receiving)
                // A range the server cannot satisfy (`416`): the bytes kept do not fit what it has
                // now; the whole file once more, from the start.
                let startsOver = failure.status == 416 && download.written > 0 && download.mayStartOver()
                repetitions += 1
                var refusal: RepeatPlan.Refusal? = startsOver || download.mayResume(after: failure) ? nil : .notRepeatable
                if refusal == nil {
                    do throws(RepeatPlan.Refusal) {
                        try await call.again(plan, after: plan.backoff(before: repetitions))
                    } catch {
                        refusal = error
                    }
                }
                if let refusal {
                    partial.abandon(keeping: download.options.resumes && download.mayGoOnLater(after: failure))
                    switch refusal {
                    case .cancelled: throw NetworkError.cancelled(phase: .receiving)
                    case .pastEnd: throw Self.downloadPastEnd
                    case .notRepeatable, .budget: throw failure
                    }
                }
                if startsOver {
                    do throws(NetworkError) {
                        try download.startOver()
                        partial.record(validator: nil, total: nil)
                    } catch {
                        partial.abandon(keeping: false)
                        throw error
                    }
                }
            }
        }
    }
}

extension NetworkClient {
    /// The failure of a download whose ``DownloadOptions/maxDuration`` has passed.
    static let downloadPastEnd = NetworkError(
        kind: .timedOut, phase: .receiving, message: "the download did not end within its maxDuration")
}

/// One download's progress across its connections.
struct DownloadRun {
    let options: DownloadOptions
    let file: FileHandle
    private(set) var written: Int64 = 0
    /// The first answer's strong `ETag`, else its `Last-Modified`: what `If-Range` sends.
    private(set) var validator: String?
    private var digest = SHA256Digest()
    private var head: HTTPResponse?
    /// The whole file's size as the first full answer announced it (its `Content-Length`).
    private(set) var total: Int64?
    private var resumed = 0
    private var restarted = 0

    init(options: DownloadOptions, file: FileHandle) {
        self.options = options
        self.file = file
    }

    /// Goes on from what a previous run left in the part file: its bytes (hashed again when a
    /// checksum is asked for), validator and total.
    mutating func goOn(from left: PartialFile.Left, partial: PartialFile) throws(NetworkError) {
        guard left.bytes <= Int64(options.maxBytes) else { throw NetworkError.responseTooLarge(limit: options.maxBytes, announced: nil) }
        if options.sha256 != nil { try partial.hashExisting(into: &digest, bytes: left.bytes) }
        written = left.bytes
        validator = left.validator
        total = left.total
    }

    /// Whether a later run may go on from the bytes written after the download failed this way:
    /// it has bytes and a validator, and the failure says nothing against them (not a checksum,
    /// another version of the file, a cap, or a range the server cannot satisfy).
    func mayGoOnLater(after error: NetworkError) -> Bool {
        written > 0 && validator != nil && ![.invalidResponse, .responseTooLarge, .invalidRequest].contains(error.kind)
            && error.status != 416
    }

    /// Whether the download may begin again from nothing (counted with the resumptions).
    func mayStartOver() -> Bool {
        options.resumes && resumed + restarted < options.maxResumes
    }

    /// Empties the file and forgets what the answers said: the next request asks for all of it.
    mutating func startOver() throws(NetworkError) {
        restarted += 1
        do {
            try file.truncate(atOffset: 0)
            try file.seek(toOffset: 0)
        } catch {
            throw NetworkError(kind: .invalidRequest, phase: .receiving, message: "the download's file could not be reset: \(error)")
        }
        written = 0
        digest = SHA256Digest()
        validator = nil
        total = nil
    }

    /// What asks for the rest of the file: `Range` from the bytes written, `If-Range` the
    /// validator; nothing before the first byte or without a validator.
    var rangeHeaders: [(String, String)] {
        guard written > 0, let validator else { return [] }
        return [("Range", "bytes=\(written)-"), ("If-Range", validator)]
    }

    /// Reads an answer's head: a `206` must continue the file; anything else starts it over.
    mutating func take(_ head: HTTPResponse) throws(NetworkError) {
        self.head = head
        if head.status.code == 206 {
            guard written > 0, let range = head.headerFields[.contentRange], let parts = Self.parts(ofRange: range),
                parts.start == written, parts.end >= parts.start, parts.total.map({ parts.end < $0 }) ?? true
            else {
                throw NetworkError(
                    kind: .invalidResponse, phase: .validating,
                    message: "the server answered the download's range with '\(head.headerFields[.contentRange] ?? "no Content-Range")', "
                        + "not the bytes from \(written)",
                    status: 206)
            }
            // The rest must be of the same file: the same total, and the same validator when the
            // answer names one (a strong ETag must be there when the first answer had one).
            if let total, let announced = parts.total, announced != total {
                throw Self.otherVersion("its Content-Range total is \(announced), not the \(total) bytes first announced")
            }
            if let validator, validator.hasPrefix("\"") || validator.hasPrefix("W/") {
                guard head.headerFields[.eTag] == validator else {
                    throw Self.otherVersion("its ETag is \(head.headerFields[.eTag] ?? "missing"), not \(validator)")
                }
            } else if let validator, let modified = head.headerFields[.lastModified], modified != validator {
                throw Self.otherVersion("its Last-Modified is \(modified), not \(validator)")
            }
            resumed += 1
            return
        }
        if written > 0 { try startOver() }
        let tag = head.headerFields[.eTag].flatMap { $0.hasPrefix("W/") ? nil : $0 }
        validator = tag ?? head.headerFields[.lastModified]
        total = head.headerFields[.contentLength].flatMap { Int64($0) }
    }

    /// The whole file's size as the last answer announced it: a `206`'s `Content-Range` total,
    /// else the body's length (`announced`); `nil` when unknown.
    /// A total that is not digits, is below the bytes written or above the download's cap is
    /// unknown.
    func expectedSize(announcing announced: Int64?) -> Int64? {
        var total = announced
        if head?.status.code == 206 {
            // (The one Content-Range reader; `take` checked this head with it already.)
            total = head?.headerFields[.contentRange].flatMap(Self.parts(ofRange:))?.total
        }
        guard let total, total >= written, total <= Int64(options.maxBytes) else { return nil }
        return total
    }

    /// The first and last byte and the total (`nil` for `*`) of a `Content-Range: bytes S-E/T`;
    /// `nil` when it is not of that form (digits only).
    static func parts(ofRange text: String) -> (start: Int64, end: Int64, total: Int64?)? {
        let pieces = text.split(separator: " ", maxSplits: 1)
        guard pieces.count == 2, pieces[0].lowercased() == "bytes", let dash = pieces[1].firstIndex(of: "-"),
            let slash = pieces[1].firstIndex(of: "/"), dash < slash
        else { return nil }
        func number(_ digits: Substring) -> Int64? {
            guard !digits.isEmpty, digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
            return Int64(digits)
        }
        let range = pieces[1]
        guard let start = number(range[..<dash]), let end = number(range[range.index(after: dash)..<slash]) else { return nil }
        let totalText = range[range.index(after: slash)...]
        if totalText == "*" { return (start, end, nil) }
        guard let total = number(totalText) else { return nil }
        return (start, end, total)
    }

    /// The failure for a `206` that is of another version of the file than the bytes written:
    /// never spliced onto them.
    static func otherVersion(_ why: String) -> NetworkError {
        NetworkError(
            kind: .invalidResponse, phase: .validating,
            message: "the server's 206 for the rest of the download is of another version of the file: \(why)", status: 206)
    }

    mutating func write(_ chunk: Data) throws(NetworkError) {
        // One cap for the whole file, however many connections brought it.
        guard written + Int64(chunk.count) <= Int64(options.maxBytes) else {
            throw NetworkError.responseTooLarge(limit: options.maxBytes, announced: nil)
        }
        do {
            try file.write(contentsOf: chunk)
        } catch {
            throw NetworkError(kind: .invalidRequest, phase: .receiving, message: "the download's file could not be written: \(error)")
        }
        if options.sha256 != nil { chunk.withUnsafeBytes { digest.update($0) } }
        written += Int64(chunk.count)
    }

    /// Checks the whole body against the checksum.
    func finish() throws(NetworkError) {
        guard let expected = options.sha256?.lowercased() else { return }
        let actual = digest.hex()
        guard actual == expected else {
            throw NetworkError(
                kind: .invalidResponse, phase: .validating,
                message: "the downloaded file's SHA-256 is \(actual), not \(expected)", status: head?.status.code)
        }
    }

    /// Whether the failure is one a download goes on after: from what it has (a validator to ask
    /// for the rest with), or from the start when it has nothing yet.
    mutating func mayResume(after error: NetworkError) -> Bool {
        guard options.resumes, resumed + restarted < options.maxResumes, [.connectionClosed, .timedOut].contains(error.kind),
            written == 0 || validator != nil
        else { return false }
        if written == 0 { restarted += 1 }
        return true
    }

    func result(file: URL) -> DownloadResult {
        DownloadResult(file: file, bytes: written, resumed: resumed, restarted: restarted, head: head ?? HTTPResponse(status: .ok))
    }
}
