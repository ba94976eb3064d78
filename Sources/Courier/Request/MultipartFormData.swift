import Foundation

/// The parts of a `multipart/form-data` body.
///
/// ```swift
/// var form = MultipartFormData()
/// form.addField("title", "Quarterly report")
/// form.addFile("attachment", at: URL(fileURLWithPath: "/tmp/report.pdf"), contentType: "application/pdf")
/// let body = RequestBody.multipart(form)
/// ```
///
/// File parts are not read when they are added: their size is taken when the body is built, and
/// their bytes are streamed from disk when the body is sent.
public struct MultipartFormData: Sendable {
    enum Content: Sendable {
        case bytes(Data)
        case file(URL)
    }

    struct Part: Sendable {
        var name: String
        var filename: String?
        var contentType: String?
        var content: Content
    }

    /// The boundary between parts.
    public let boundary: String
    private(set) var parts: [Part] = []

    /// Creates an empty form.
    /// - Parameter boundary: The boundary; a random one by default.
    public init(boundary: String = "courier-" + UUID().uuidString) {
        self.boundary = boundary
    }

    /// The `Content-Type` header value, including the boundary.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Adds a text field.
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The value, sent as UTF-8.
    public mutating func addField(_ name: String, _ value: String) {
        parts.append(Part(name: name, filename: nil, contentType: nil, content: .bytes(Data(value.utf8))))
    }

    /// Adds in-memory bytes as a file part.
    /// - Parameters:
    ///   - name: The field name.
    ///   - data: The bytes.
    ///   - filename: The file name the server sees.
    ///   - contentType: The part's content type.
    public mutating func addData(_ name: String, _ data: Data, filename: String, contentType: String = "application/octet-stream") {
        parts.append(Part(name: name, filename: filename, contentType: contentType, content: .bytes(data)))
    }

    /// Adds a file part, streamed from disk when the body is sent.
    /// - Parameters:
    ///   - name: The field name.
    ///   - url: A local file.
    ///   - filename: The file name the server sees; the file's own name by default.
    ///   - contentType: The part's content type.
    public mutating func addFile(_ name: String, at url: URL, filename: String? = nil, contentType: String = "application/octet-stream") {
        parts.append(Part(name: name, filename: filename ?? url.lastPathComponent, contentType: contentType, content: .file(url)))
    }

    /// Quotes a name for a `Content-Disposition` parameter, encoding `"`, CR and LF as the HTML
    /// standard does so a name can never break the part's head.
    private static func quoted(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "%22"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return "\"\(escaped)\""
    }

    /// The body as segments; file sizes are read now so the length is known up front.
    func encodedSegments() throws(NetworkError) -> [RequestBody.Segment] {
        if boundary.isEmpty || boundary.count > 70 || boundary.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value > 0x7E }) {
            throw .invalidRequest("the multipart boundary must be 1 to 70 visible ASCII characters")
        }
        var segments: [RequestBody.Segment] = []
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\(Self.quoted(part.name))"
            if let filename = part.filename { head += "; filename=\(Self.quoted(filename))" }
            head += "\r\n"
            if let contentType = part.contentType {
                if contentType.unicodeScalars.contains(where: { $0.value < 0x20 }) {
                    throw .invalidRequest("the content type of multipart part '\(part.name)' contains a control character")
                }
                head += "Content-Type: \(contentType)\r\n"
            }
            head += "\r\n"
            segments.append(.bytes(Data(head.utf8)))
            switch part.content {
            case .bytes(let data):
                segments.append(.bytes(data))
            case .file(let url):
                segments.append(try .file(at: url, role: "multipart file"))
            }
            segments.append(.bytes(Data("\r\n".utf8)))
        }
        segments.append(.bytes(Data("--\(boundary)--\r\n".utf8)))
        return segments
    }
}
