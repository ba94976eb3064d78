import CCurl
import Courier
import Foundation

// libcurl's figures for one transfer, read once and copied into the call's recorder.

extension CurlEngine {
    func progress(of transfer: CurlTransfer) -> CurlErrorMapping.Progress {
        guard let easy = transfer.state.easy else { return .init() }
        return CurlMetrics.read(easy, usesTLS: transfer.usesTLS, addresses: &addresses).progress
    }

    /// Copies libcurl's figures into the call's recorder, and returns them (`nil` when the
    /// transfer has no handle).
    @discardableResult
    func record(_ transfer: CurlTransfer) -> CurlMetrics.Reading? {
        guard let easy = transfer.state.easy else { return nil }
        let reading = CurlMetrics.read(easy, usesTLS: transfer.usesTLS, addresses: &addresses)
        transfer.context.recorder.update { metrics in
            metrics.phaseTimings = .available(reading.timings)
            metrics.httpVersion = reading.httpVersion
            metrics.reusedConnection = reading.reused
            metrics.remoteAddress = reading.remoteAddress
            metrics.bytesSent = reading.bytesSent
        }
        connections.transferFinished(reused: reading.reused)
        return reading
    }

    /// The error for a transfer whose proxy answered its `CONNECT` with anything but `2xx`
    /// (`CURLINFO_HTTP_CONNECTCODE`), or `nil`.
    func proxyRefusal(_ easy: UnsafeMutableRawPointer, _ transfer: CurlTransfer) -> NetworkError? {
        guard let proxy = configuration.proxy.server(for: transfer.request) else { return nil }
        var status = 0
        guard ccurl_easy_getinfo_long(easy, CURLINFO_HTTP_CONNECTCODE, &status) == CURLE_OK, status != 0, !(200..<300).contains(status)
        else { return nil }
        return NetworkError.proxyRefused(status: status, proxy: proxy)
    }
}
