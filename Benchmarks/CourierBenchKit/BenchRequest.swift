import Foundation
import HTTPTypes

/// What every call of a run or a probe sends besides its URL: the method, the caller's headers,
/// the body and the deadline. Every client of a run (Courier's transports, the C reference, wrk and
/// h2load) sends the same one.
public struct BenchRequest: Codable, Sendable, Hashable {
    /// One header line, as `-H 'Name: value'` gave it.
    public struct Header: Codable, Sendable, Hashable {
        /// The field name.
        public var name: String
        /// The field value.
        public var value: String

        /// Creates a header.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The method name (`GET`, `POST`, ...).
    public var method: String
    /// Header lines sent with every request, in order (`Content-Type` is in ``contentType``).
    public var headers: [Header]
    /// The request body, if any.
    public var body: [UInt8]?
    /// The body's content type (`-H 'Content-Type: …'`, or `application/octet-stream`).
    public var contentType: String?
    /// Seconds each call may take, end to end.
    public var timeoutSeconds: Double

    /// Creates a request.
    public init(
        method: String = "GET", headers: [Header] = [], body: [UInt8]? = nil, contentType: String? = nil,
        timeoutSeconds: Double = BenchRequest.defaultTimeoutSeconds
    ) {
        self.method = method
        self.headers = headers
        self.body = body
        self.contentType = contentType
        self.timeoutSeconds = timeoutSeconds
    }

    /// The deadline of each call when `--timeout` is not given.
    public static let defaultTimeoutSeconds = 60.0
    /// The longest `--timeout`.
    public static let maxTimeoutSeconds = 600.0
    /// The largest body `--data` or `--data-file` may give: the body is held in memory and sent by
    /// every call.
    public static let maxBodyBytes = 16 << 20

    /// Body bytes each call sends.
    public var bodyCount: Int { body?.count ?? 0 }

    /// The header lines including `Content-Type`, as `Name: value` (for the C reference and the tools).
    public var headerLines: [String] {
        headers.map { "\($0.name): \($0.value)" } + (body != nil ? contentType.map { ["Content-Type: \($0)"] } ?? [] : [])
    }

    /// This request with another method and body (a scenario's), keeping the caller's headers and deadline.
    func with(method: String, body: [UInt8]?, contentType: String?) -> BenchRequest {
        BenchRequest(method: method, headers: headers, body: body, contentType: contentType, timeoutSeconds: timeoutSeconds)
    }
}

/// The curl-like options that shape a request, as the command line gave them: `-X`, `-H`, `--data`,
/// `--data-file` and `--timeout`. `run --url` and `probe` both read them here.
public struct RequestOptions: Sendable, Equatable {
    /// `-X`.
    public var method: String?
    /// `-H`, each `Name: value`.
    public var headers: [String] = []
    /// `--data`.
    public var data: String?
    /// `--data-file`.
    public var dataFile: String?
    /// `--timeout`, in seconds.
    public var timeout: Double?

    /// Nothing given.
    public init() {}

    /// Whether any option that changes the method or the body was given.
    public var shapesRequest: Bool { method != nil || data != nil || dataFile != nil }

    /// Checks the options and builds the request.
    /// - Returns: The request: `GET`, or `POST` when a body is given and `-X` is not.
    /// - Throws: ``BenchError/invalidOption(_:)`` naming the option.
    public func request() throws(BenchError) -> BenchRequest {
        var request = BenchRequest()
        if let timeout {
            guard timeout > 0, timeout <= BenchRequest.maxTimeoutSeconds else {
                throw .invalidOption(
                    "--timeout must be more than 0 and at most \(Int(BenchRequest.maxTimeoutSeconds)) seconds (got \(timeout))")
            }
            request.timeoutSeconds = timeout
        }
        for line in headers {
            let header = try Self.header(line)
            if header.name.lowercased() == "content-type" {
                request.contentType = header.value
            } else {
                request.headers.append(header)
            }
        }
        request.body = try body()
        if request.body != nil, request.contentType == nil { request.contentType = "application/octet-stream" }
        let name = (method ?? (request.body == nil ? "GET" : "POST")).uppercased()
        guard HTTPRequest.Method(name) != nil else { throw .invalidOption("-X: \"\(name)\" is not a method name") }
        if request.body != nil, name == "GET" || name == "HEAD" {
            throw .invalidOption("-X \(name) sends no body: drop --data/--data-file or choose another method")
        }
        request.method = name
        return request
    }

    private func body() throws(BenchError) -> [UInt8]? {
        switch (data, dataFile) {
        case (.some, .some):
            throw .invalidOption("give --data or --data-file, not both")
        case (let text?, nil):
            guard text.utf8.count <= BenchRequest.maxBodyBytes else {
                throw .invalidOption("--data is larger than \(BenchRequest.maxBodyBytes) bytes")
            }
            return Array(text.utf8)
        case (nil, let path?):
            let url = URL(fileURLWithPath: path)
            let values: URLResourceValues
            do {
                values = try url.resourceValues(forKeys: [.fileSizeKey, .isRegularFileKey])
            } catch {
                throw .invalidOption("--data-file \(path): no readable file there")
            }
            guard values.isRegularFile == true, let size = values.fileSize else {
                throw .invalidOption("--data-file \(path): not a regular file")
            }
            guard size <= BenchRequest.maxBodyBytes else {
                throw .invalidOption("--data-file \(path) is \(size) bytes; the most is \(BenchRequest.maxBodyBytes)")
            }
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw .invalidOption("--data-file \(path): no readable file there")
            }
            guard contents.count <= BenchRequest.maxBodyBytes else {
                throw .invalidOption("--data-file \(path) grew past \(BenchRequest.maxBodyBytes) bytes while it was read")
            }
            return Array(contents)
        case (nil, nil):
            return nil
        }
    }

    /// Parses `Name: value`, with the rules a transport would apply: a token name, no CR, LF or NUL.
    private static func header(_ line: String) throws(BenchError) -> BenchRequest.Header {
        guard let colon = line.firstIndex(of: ":") else { throw .invalidOption("-H takes 'Name: value' (got \"\(line)\")") }
        let name = String(line[..<colon])
        let value = line[line.index(after: colon)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        guard !name.isEmpty, HTTPField.Name(name) != nil else {
            throw .invalidOption("-H: \"\(name)\" is not a header name (a token, with no spaces)")
        }
        guard HTTPField.isValidValue(value), !value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" })
        else { throw .invalidOption("-H \(name): the value holds a control character (CR, LF or NUL)") }
        let reserved = ["host", "content-length", "transfer-encoding", "connection"]
        guard !reserved.contains(name.lowercased()) else {
            throw .invalidOption("-H \(name): the transport sets this header itself")
        }
        return BenchRequest.Header(name: name, value: value)
    }
}
