import Synchronization

/// Whether a WebDAV server writes a `PUT` that carries `Content-Range` at that
/// offset of the existing file, and so whether an upload can go on from what
/// the server holds. Apache `mod_dav` does. RFC 9110 (9.3.4) has a server that
/// does not refuse such a PUT with `400`; sabre/dav (Nextcloud's core) and
/// nginx say `501`. golang's `x/net/webdav` (`rclone serve webdav`) ignores the
/// header and writes the piece as the whole file.
///
/// So a file larger than one piece goes as pieces, each a PUT with its
/// `Content-Range` (the first one makes the temporary file), checked against
/// the size the server then holds: a server that refuses ranges says so to the
/// first piece, before most of its bytes are sent (`Expect: 100-continue`). A kill or a dropped connection
/// costs at most the piece in flight, and the next run goes on after the
/// leftover's last bytes are compared (`UploadSteps.tailMatches`). A server
/// that refuses or ignores the range is remembered (`no`), and the file goes
/// again whole from the start, as every upload to it from then on.
enum WebDAVRangedPut {
    enum Support: UInt8, Sendable {
        /// Nothing tried yet: pieces, the first ranged one finds out.
        case unknown
        /// A ranged PUT wrote its piece where it belongs.
        case yes
        /// The server refused or ignored a ranged PUT: whole files only.
        case no
    }

    /// What one PUT sends at most when the server may take pieces. 16 MiB: one
    /// request more per 16 MiB is noise even at the internet's round trip, and a
    /// lost piece is re-sent in seconds on Wi-Fi.
    static let piece: Int64 = 16 << 20

    /// Where the PUT that starts at `offset` ends.
    static func end(from offset: Int64, size: Int64, support: Support, piece: Int64 = piece) -> Int64 {
        guard support != .no, piece > 0, size > piece else { return size }
        return min(size, offset + piece)
    }

    /// What the answer to a PUT of the bytes from `offset` to `end` says
    /// (`ranged`: it carried `Content-Range`; `held`: the temporary's size
    /// afterwards, nil when not looked up).
    enum Verdict: Equatable {
        /// As asked: the server holds the file up to the piece's end.
        case wrote
        /// The server does not take ranged PUTs (it refused, or wrote the piece
        /// as the whole file): send the whole file again.
        case noRanges
        /// The server answered a piece but does not say how much of the file it
        /// holds: pieces cannot be checked, so whole files only.
        case sizeUnknown
        /// The first piece went into a longer leftover of an earlier try,
        /// written in place (so the server takes ranges): the leftover must go
        /// before the file starts again.
        case leftover
        /// A failure of its own (no space, no rights ...), reported as such.
        case failed
    }

    static func verdict(status: Int, ranged: Bool, offset: Int64, end: Int64, held: Int64?) -> Verdict {
        if (200..<300).contains(status) {
            guard ranged else { return .wrote }
            guard let held else { return .sizeUnknown }
            if held == end { return .wrote }
            // A server that ignores the range writes the piece as the whole
            // file: from offset 0 that is right, after it the size shows it.
            return offset == 0 && held > end ? .leftover : .noRanges
        }
        // 400 is RFC 9110's refusal of a ranged PUT, 501 sabre/dav's and nginx's;
        // 416 a server that reads Content-Range as a download's range.
        if ranged && [400, 416, 501].contains(status) { return .noRanges }
        return .failed
    }

    /// What a server was found to do, shared by copies of its file system.
    final class Memo: Sendable {
        private let value = Atomic<UInt8>(Support.unknown.rawValue)

        var support: Support { Support(rawValue: value.load(ordering: .acquiring)) ?? .unknown }

        func learn(_ s: Support) {
            // `no` is final: a server that refused once is not asked again.
            if support != .no { value.store(s.rawValue, ordering: .releasing) }
        }
    }
}
