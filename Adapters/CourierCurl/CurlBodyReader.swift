import Courier
import Foundation

/// The consumer's handle on a streamed body. When the consumer drops the body before its end
/// (the stream and its iterator are released), the transfer is stopped.
final class CurlBodyReader: ResponseBodySource {
    private let buffer: CurlBodyBuffer

    init(buffer: CurlBodyBuffer) {
        self.buffer = buffer
    }

    func next() async throws -> Data? {
        try await buffer.next()
    }

    deinit {
        buffer.consumerWentAway()
    }
}
