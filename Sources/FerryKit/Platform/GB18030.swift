import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// GB18030 text (a superset of GB2312 and GBK, what ez Share cards write) to and
/// from Swift strings, through glibc's iconv: no table of our own.
package enum GB18030 {
    /// Decodes GB18030 (or GB2312, GBK) bytes; a byte that starts no valid
    /// sequence becomes U+FFFD and decoding goes on after it.
    package static func decode<C: Collection<UInt8>>(_ bytes: C) -> String {
        // ASCII (every 8.3 name, dates, sizes) needs no conversion.
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        var input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity(input.count * 3 / 2 + 16)
        convert(&input, from: "GB18030", to: "UTF-8", into: &out, replacement: Array("\u{FFFD}".utf8))
        return String(decoding: out, as: UTF8.self)
    }

    /// Encodes a string as GB18030; nil when iconv refuses a character (none is
    /// outside GB18030, which covers all of Unicode).
    package static func encode(_ text: String) -> [UInt8]? {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return Array(text.utf8) }
        var input = Array(text.utf8)
        var out: [UInt8] = []
        guard convert(&input, from: "UTF-8", to: "GB18030", into: &out, replacement: nil) else { return nil }
        return out
    }

    /// Runs iconv over all of `input`. An invalid or incomplete sequence is
    /// replaced by `replacement` (one byte skipped), or ends the conversion
    /// (false) when there is none.
    @discardableResult
    private static func convert(
        _ input: inout [UInt8], from: String, to: String, into out: inout [UInt8], replacement: [UInt8]?
    ) -> Bool {
        let cd = iconv_open(to, from)
        guard cd != iconv_t(bitPattern: -1) else { return false }
        defer { iconv_close(cd) }
        var chunk = [UInt8](repeating: 0, count: 4096)
        return input.withUnsafeMutableBytes { inBuffer -> Bool in
            var inPointer = inBuffer.baseAddress?.assumingMemoryBound(to: CChar.self)
            var inLeft = inBuffer.count
            while inLeft > 0 {
                let (result, written) = chunk.withUnsafeMutableBytes { outBuffer -> (Int, Int) in
                    var outPointer = outBuffer.baseAddress?.assumingMemoryBound(to: CChar.self)
                    var outLeft = outBuffer.count
                    let r = iconv(cd, &inPointer, &inLeft, &outPointer, &outLeft)
                    return (r == -1 ? Int(errno) : 0, outBuffer.count - outLeft)
                }
                out.append(contentsOf: chunk[0..<written])
                switch result {
                case 0, Int(E2BIG):
                    continue
                default:
                    // EILSEQ or EINVAL: a byte that starts no character here.
                    guard let replacement else { return false }
                    out.append(contentsOf: replacement)
                    inPointer = inPointer.map { $0 + 1 }
                    inLeft -= 1
                }
            }
            return true
        }
    }
}
