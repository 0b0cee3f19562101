import Synchronization

/// What a folder listing said of a file, standing in for asking the server in
/// the download's first attempt from offset 0 only (FTP's `SIZE` and `MDTM`,
/// SMB's `fstat` after the open): a retry, or a resume from a part, asks.
/// Shared by a download's attempts, which may come from different threads.
final class ListedFacts<Facts: Sendable>: Sendable {
    let facts: Facts
    private let spent = Atomic<Bool>(false)

    init(_ facts: Facts) { self.facts = facts }

    /// The facts for an attempt from `offset`: the first attempt from 0 gets
    /// them, once; every other attempt, nil.
    func forAttempt(from offset: Int64) -> Facts? {
        offset == 0 && !spent.exchange(true, ordering: .relaxed) ? facts : nil
    }
}
