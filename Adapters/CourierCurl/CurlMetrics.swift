import CCurl
import Courier
import Glibc

/// Reads a finished (or stopped) transfer's figures from libcurl's `CURLINFO_*` counters.
enum CurlMetrics {
    /// Everything read for one transfer.
    struct Reading {
        var timings = RequestMetrics.TransferTimings()
        var progress = CurlErrorMapping.Progress()
        var bytesSent: Int64 = 0
        var httpVersion: String?
        var reused = false
        var remoteAddress: String?
    }

    /// The peer address text made last, reused while the peer stays the same (a client mostly
    /// talks to a few peers, and formatting the address costs more than comparing its bytes).
    struct AddressCache {
        private var ip: [CChar] = []
        private var port = 0
        private var text = ""

        /// `ip:port`, or `[ip]:port` for IPv6.
        mutating func text(ip pointer: UnsafePointer<CChar>, port: Int) -> String {
            let length = strlen(pointer)
            if port == self.port, ip.count == length,
                ip.withUnsafeBufferPointer({ $0.baseAddress.map { memcmp($0, pointer, length) == 0 } ?? (length == 0) })
            {
                return text
            }
            let host = String(cString: pointer)
            ip = Array(UnsafeBufferPointer(start: pointer, count: length))
            self.port = port
            text = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)"
            return text
        }
    }

    /// Reads the counters, formatting the peer address through `addresses`. A counter libcurl
    /// cannot give is left out; nothing here fails the call.
    static func read(_ easy: UnsafeMutableRawPointer, usesTLS: Bool, addresses: inout AddressCache) -> Reading {
        /// A `curl_off_t` counter: microseconds for the `*_TIME_T` ones, bytes for the sizes.
        func counter(_ info: CURLINFO) -> Int64 {
            var value: curl_off_t = 0
            return ccurl_easy_getinfo_off_t(easy, info, &value) == CURLE_OK ? Int64(value) : 0
        }
        func number(_ info: CURLINFO) -> Int? {
            var value = 0
            return ccurl_easy_getinfo_long(easy, info, &value) == CURLE_OK ? value : nil
        }
        var reading = Reading()
        let preTransfer = counter(CURLINFO_PRETRANSFER_TIME_T)
        let progress = CurlErrorMapping.Progress(
            nameLookup: counter(CURLINFO_NAMELOOKUP_TIME_T), connect: counter(CURLINFO_CONNECT_TIME_T),
            tlsHandshake: counter(CURLINFO_APPCONNECT_TIME_T), preTransfer: preTransfer,
            firstByte: counter(CURLINFO_STARTTRANSFER_TIME_T), usesTLS: usesTLS,
            // No new connection *and* the request got going: a connection was reused. (A transfer
            // still connecting also has no completed connection.)
            reused: number(CURLINFO_NUM_CONNECTS) == 0 && preTransfer > 0
        )
        reading.progress = progress
        let total = counter(CURLINFO_TOTAL_TIME_T)
        func offset(_ value: Int64) -> Duration? { value > 0 ? .microseconds(value) : nil }
        reading.timings = RequestMetrics.TransferTimings(
            dns: progress.reused ? nil : offset(progress.nameLookup),
            connect: progress.reused ? nil : offset(progress.connect),
            tls: progress.reused || !usesTLS ? nil : offset(progress.tlsHandshake),
            requestSent: offset(progress.preTransfer),
            firstByte: offset(progress.firstByte),
            total: offset(total)
        )
        reading.bytesSent = counter(CURLINFO_SIZE_UPLOAD_T)
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
            reading.remoteAddress = addresses.text(ip: ip, port: number(CURLINFO_PRIMARY_PORT) ?? 0)
        }
        return reading
    }
}
