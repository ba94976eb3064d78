import Courier
import Foundation
import HTTPTypes

/// One call of a soak run, chosen by its number: six in ten are `GET`s of 64 items (so identical
/// ones in flight share a transfer), two are `POST`s with an `Idempotency-Key` (retried), two
/// are `POST`s without one (never resent once they may have reached the server).
final class SoakCall: BaseAPI<Data>, @unchecked Sendable {
    /// What a call is.
    enum Kind: String, CaseIterable, Codable, Sendable {
        case get
        case keyedPost = "keyed-post"
        case unkeyedPost = "unkeyed-post"
    }

    let number: Int
    let kind: Kind

    init(client: NetworkClient, number: Int) {
        self.number = number
        kind = Self.kind(of: number)
        super.init(client: client)
    }

    /// The kind of call `number` is.
    static func kind(of number: Int) -> Kind {
        switch number % 10 {
        case 0..<6: .get
        case 6, 7: .keyedPost
        default: .unkeyedPost
        }
    }

    override var path: String { kind == .get ? "item/\(number % 64)" : "post/\(number)" }
    override var method: HTTPRequest.Method { kind == .get ? .get : .post }
    override var headers: RequestHeaders { kind == .keyedPost ? ["Idempotency-Key": "soak-\(number)"] : [:] }
    override var body: RequestBody? { kind == .get ? nil : .text("call \(number)") }
}
