/// Serialises write sequences per card within this process.
///
/// A card keeps one upload folder (`UPDIR`) and one timestamp (`FTIME`) for
/// everyone, so `UPDIR`, `FTIME` and the `POST` that uses them must not
/// interleave with another upload's: two uploads started at once (`put -j 4`)
/// take turns for the whole sequence. The per-host connection limit alone
/// serialises single requests, not sequences.
actor FlashAirWriteLock {
    /// The one lock table of the process.
    static let shared = FlashAirWriteLock()

    private var held: Set<String> = []
    private var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]

    /// Waits until no other sequence holds `key` (a card's `hostKey`), then holds it.
    func acquire(_ key: String) async {
        guard held.contains(key) else {
            held.insert(key)
            return
        }
        // Ownership passes directly from `release` to the resumed waiter.
        await withCheckedContinuation { waiters[key, default: []].append($0) }
    }

    /// Hands `key` to the next waiter, or frees it.
    func release(_ key: String) {
        if var queue = waiters[key], !queue.isEmpty {
            let next = queue.removeFirst()
            waiters[key] = queue.isEmpty ? nil : queue
            next.resume()
        } else {
            held.remove(key)
        }
    }

    /// Runs `body` holding `key`.
    static func withLock<T: Sendable>(
        _ key: String, _ body: () async throws(FerryError) -> T
    ) async throws(FerryError) -> T {
        await shared.acquire(key)
        do {
            let value = try await body()
            await shared.release(key)
            return value
        } catch {
            await shared.release(key)
            throw error
        }
    }
}
