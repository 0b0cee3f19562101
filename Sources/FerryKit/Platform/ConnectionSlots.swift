import Synchronization

/// At most `size` holders at once; the others wait here in turn, before they
/// take any memory or connection (SMB's contexts, SFTP's OpenSSH channels:
/// pools whose work does not go through the libcurl engine's per-host limit).
final class ConnectionSlots: Sendable {
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())
    /// Nil: the process's per-server limit when asked (`defaultSize`).
    private let chosenSize: Int?

    init(size: Int?) { chosenSize = size.map { max(1, $0) } }

    /// Holders at once per server where the options set no limit.
    private static let defaultSize = Atomic(4)

    /// Sets the per-server limit of pools whose options set none (`Ferry.setConnectionLimits`).
    static func setDefaultSize(_ n: Int) { defaultSize.store(max(1, n), ordering: .relaxed) }

    var size: Int { chosenSize ?? ConnectionSlots.defaultSize.load(ordering: .relaxed) }

    /// Runs `body` holding a slot.
    func holding<T, E: Error>(_ body: () async throws(E) -> T) async throws(E) -> T {
        await take()
        defer { give() }
        return try await body()
    }

    private func take() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let size = self.size
            let now = state.withLock { s -> Bool in
                if s.running < size {
                    s.running += 1
                    return true
                }
                s.waiting.append(c)
                return false
            }
            if now { c.resume() }
        }
    }

    private func give() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if s.waiting.isEmpty {
                s.running -= 1
                return nil
            }
            return s.waiting.removeFirst()
        }
        next?.resume()
    }
}
