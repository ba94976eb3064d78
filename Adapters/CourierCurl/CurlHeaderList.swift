import CCurl
import Courier

/// A request's header lines as the `curl_slist` libcurl reads for `CURLOPT_HTTPHEADER`, built in
/// one allocation: the list nodes first, then every line's bytes.
///
/// `curl_slist_append` would allocate twice per line (the node and a copy of the text); libcurl
/// only reads the list, so Courier owns the block and frees it once the handle is off the multi
/// handle (``free()``), never with `curl_slist_free_all`.
struct CurlHeaderList {
    /// The first node; the others follow it in the same block.
    let first: UnsafeMutablePointer<curl_slist>

    /// The lines for `fields`, in order, then `Expect:` (which turns off libcurl's 100-continue
    /// wait) unless the request sets `Expect` itself. A field with an empty value is written
    /// `Name;`, libcurl's spelling for "send this header with no value".
    init(fields: HTTPFields) {
        var count = 1
        var textBytes = "Expect:".utf8.count + 1
        var sawExpect = false
        for field in fields {
            count += 1
            // Name, ": " (or ";"), value, NUL.
            textBytes += field.name.rawName.utf8.count + 2 + field.value.utf8.count + 1
            if field.name == .expect { sawExpect = true }
        }
        if sawExpect {
            count -= 1
            textBytes -= "Expect:".utf8.count + 1
        }
        let nodeBytes = count * MemoryLayout<curl_slist>.stride
        let block = UnsafeMutableRawPointer.allocate(
            byteCount: nodeBytes + textBytes, alignment: MemoryLayout<curl_slist>.alignment)
        let nodes = block.bindMemory(to: curl_slist.self, capacity: count)
        var text = (block + nodeBytes).bindMemory(to: CChar.self, capacity: textBytes)
        var index = 0

        func appendLine(_ write: (inout UnsafeMutablePointer<CChar>) -> Void) {
            let start = text
            write(&text)
            text.pointee = 0
            text += 1
            let next = index + 1 < count ? nodes + index + 1 : nil
            (nodes + index).initialize(to: curl_slist(data: start, next: next))
            index += 1
        }
        for field in fields {
            appendLine { cursor in
                Self.copy(field.name.rawName, to: &cursor)
                if field.value.isEmpty {
                    cursor.pointee = CChar(UInt8(ascii: ";"))
                    cursor += 1
                } else {
                    cursor.pointee = CChar(UInt8(ascii: ":"))
                    (cursor + 1).pointee = CChar(UInt8(ascii: " "))
                    cursor += 2
                    Self.copy(field.value, to: &cursor)
                }
            }
        }
        if !sawExpect { appendLine { Self.copy("Expect:", to: &$0) } }
        first = nodes
    }

    /// Releases the block. libcurl must no longer use it.
    func free() {
        UnsafeMutableRawPointer(first).deallocate()
    }

    private static func copy(_ string: String, to cursor: inout UnsafeMutablePointer<CChar>) {
        for byte in string.utf8 {
            cursor.pointee = CChar(bitPattern: byte)
            cursor += 1
        }
    }
}
