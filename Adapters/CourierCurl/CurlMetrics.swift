import CCurl
import Courier

/// Reads a finished (or stopped) transfer's figures from libcurl's `CURLINFO_*` counters.
enum CurlMetrics {
    /// Everything read for one transfer.
    struct Reading {
        var timings = RequestMetrics.TransferTimings()
        var progress = CurlErrorMapping.Progress()
        var bytesSent: Int64 = 0
        var bytesReceived: Int64 = 0
        var httpVersion: String?
        var reused = false
        var remoteAddress: String?
    }

    /// Reads the counters. A counter libcurl cannot give is left out; nothing here fails the call.
    static func read(_ easy: UnsafeMutableRawPointer, usesTLS: Bool) -> Reading {
        func microseconds(_ info: CURLINFO) -> Int64 {
            var value: curl_off_t = 0
            return ccurl_easy_getinfo_off_t(easy, info, &value) == CURLE_OK ? Int64(value) : 0
        }
        func number(_ info: CURLINFO) -> Int? {
            var value = 0
            return ccurl_easy_getinfo_long(easy, info, &value) == CURLE_OK ? value : nil
        }
        var reading = Reading()
        let preTransfer = microseconds(CURLINFO_PRETRANSFER_TIME_T)
        let progress = CurlErrorMapping.Progress(
            nameLookup: microseconds(CURLINFO_NAMELOOKUP_TIME_T), connect: microseconds(CURLINFO_CONNECT_TIME_T),
            tlsHandshake: microseconds(CURLINFO_APPCONNECT_TIME_T), preTransfer: preTransfer,
            firstByte: microseconds(CURLINFO_STARTTRANSFER_TIME_T), usesTLS: usesTLS,
            // No new connection *and* the request got going: a connection was reused. (A transfer
            // still connecting also has no completed connection.)
            reused: number(CURLINFO_NUM_CONNECTS) == 0 && preTransfer > 0
        )
        reading.progress = progress
        let total = microseconds(CURLINFO_TOTAL_TIME_T)
        func offset(_ value: Int64) -> Duration? { value > 0 ? .microseconds(value) : nil }
        reading.timings = RequestMetrics.TransferTimings(
            dns: progress.reused ? nil : offset(progress.nameLookup),
            connect: progress.reused ? nil : offset(progress.connect),
            tls: progress.reused || !usesTLS ? nil : offset(progress.tlsHandshake),
            requestSent: offset(progress.preTransfer),
            firstByte: offset(progress.firstByte),
            total: offset(total)
        )
        reading.bytesSent = microseconds(CURLINFO_SIZE_UPLOAD_T)
        reading.bytesReceived = microseconds(CURLINFO_SIZE_DOWNLOAD_T)
        reading.reused = progress.reused
        switch number(CURLINFO_HTTP_VERSION) {
        case Int(CURL_HTTP_VERSION_1_0): reading.httpVersion = "1.0"
        case Int(CURL_HTTP_VERSION_1_1): reading.httpVersion = "1.1"
        case Int(CURL_HTTP_VERSION_2_0): reading.httpVersion = "2"
        case Int(CURL_HTTP_VERSION_3): reading.httpVersion = "3"
        default: reading.httpVersion = nil
        }
        var ip: UnsafePointer<CChar>?
        if ccurl_easy_getinfo_string(easy, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK, let ip, ip.pointee != 0 {
            let port = number(CURLINFO_PRIMARY_PORT) ?? 0
            let host = String(cString: ip)
            reading.remoteAddress = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
        return reading
    }
}
