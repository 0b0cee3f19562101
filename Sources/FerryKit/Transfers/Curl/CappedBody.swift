/// A reply body kept in memory up to a limit: the one rule of the jobs whose
/// whole answer fits in memory (`HTTPRequestJob`, `RemoteCommandJob`). Bytes
/// that would take it past the limit are refused and the overflow remembered,
/// so the job stops the transfer and its caller can say "too large".
struct CappedBody {
    /// The most bytes kept.
    let limit: Int
    /// The bytes kept so far.
    private(set) var bytes: [UInt8] = []
    /// Set when a piece would have taken the body past `limit`.
    private(set) var overflowed = false

    init(limit: Int) { self.limit = limit }

    /// Keeps `piece`, or refuses it when the body would grow past `limit`;
    /// false tells libcurl to stop the transfer.
    mutating func append(_ piece: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count + piece.count <= limit else {
            overflowed = true
            return false
        }
        bytes.append(contentsOf: piece)
        return true
    }
}
