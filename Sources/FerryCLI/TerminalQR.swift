import CQREncode
import Foundation

/// A QR code for a terminal: libqrencode's modules drawn two rows to a line with
/// the half-block characters (`▀`, `▄`, `█`), dark modules as the terminal's
/// background on a light quiet zone, so a phone's camera reads it from the screen.
enum TerminalQR {
    /// The modules of `text`'s QR code (true = dark), error correction level M;
    /// nil when libqrencode cannot encode it.
    static func modules(_ text: String) -> [[Bool]]? {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        let data: UnsafeMutablePointer<UInt8> = code.pointee.data
        var rows: [[Bool]] = []
        for y in 0..<width {
            var row: [Bool] = []
            for x in 0..<width { row.append(data[y * width + x] & 1 == 1) }
            rows.append(row)
        }
        return rows
    }

    /// The code drawn with a quiet zone of `margin` modules: a light module is a
    /// block, a dark one a space (light text on a dark terminal scans best as a
    /// negative, and phones read both).
    static func render(_ modules: [[Bool]], margin: Int = 2) -> String {
        let size = modules.count + 2 * margin
        func dark(_ x: Int, _ y: Int) -> Bool {
            let (mx, my) = (x - margin, y - margin)
            guard my >= 0, my < modules.count, mx >= 0, mx < modules.count else { return false }
            return modules[my][mx]
        }
        var out = ""
        for y in stride(from: 0, to: size, by: 2) {
            for x in 0..<size {
                let top = !dark(x, y)
                let bottom = y + 1 < size ? !dark(x, y + 1) : false
                out += top && bottom ? "█" : top ? "▀" : bottom ? "▄" : " "
            }
            out += "\n"
        }
        return out
    }

    /// The modules back from `render`'s text (for the tests, and a check).
    static func parse(_ text: String, margin: Int = 2) -> [[Bool]] {
        var light: [[Bool]] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            var top: [Bool] = []
            var bottom: [Bool] = []
            for c in line {
                top.append(c == "█" || c == "▀")
                bottom.append(c == "█" || c == "▄")
            }
            light.append(top)
            light.append(bottom)
        }
        let n = light.first.map { $0.count - 2 * margin } ?? 0
        guard n > 0, light.count >= n + margin else { return [] }
        return (0..<n).map { y in (0..<n).map { x in !light[y + margin][x + margin] } }
    }
}
