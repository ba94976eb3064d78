import Foundation
import HTTPTypes

/// The structured format a response body is in, read from its `Content-Type`.
///
/// ``ResponseDecoder/automatic`` uses it to pick JSON or XML for a `Decodable` output.
package enum BodyFormat: Sendable, Hashable {
    /// `application/json`, `text/json` or any `+json` type.
    case json
    /// `application/xml`, `text/xml` or any `+xml` type (`application/soap+xml`, `application/atom+xml`).
    case xml
    /// No `Content-Type` at all: decoded as JSON, as Courier always has.
    case unstated
    /// Some other media type, kept (lowercased, without parameters) for the error message.
    case other(String)

    /// The format of a response head.
    package init(_ head: HTTPResponse) {
        self.init(contentType: head.headerFields[.contentType])
    }

    /// The format named by a `Content-Type` value; parameters (`; charset=utf-8`) are ignored.
    package init(contentType: String?) {
        guard let contentType else {
            self = .unstated
            return
        }
        let essence = contentType.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces).lowercased()
        switch essence {
        case "": self = .unstated
        case "application/json", "text/json": self = .json
        case "application/xml", "text/xml": self = .xml
        case _ where essence.hasSuffix("+json"): self = .json
        case _ where essence.hasSuffix("+xml"): self = .xml
        default: self = .other(essence)
        }
    }
}
