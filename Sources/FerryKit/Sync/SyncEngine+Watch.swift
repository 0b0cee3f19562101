import Foundation

extension SyncEngine {
    /// Keeps importing as files appear, until the calling task is cancelled.
    ///
    /// On a FlashAir card it asks op=121 (the time of the last write; cheap, and
    /// safe with other watchers, unlike op=102) every interval, and lists again only
    /// once the value changed and then held still for one interval (a photo being
    /// written is not fetched half-way). A value going backwards means the card
    /// restarted; another CID means another card. Elsewhere it lists every interval
    /// and fetches a new file once it looked the same in two listings in a row.
    /// A source that stops answering (camera off, server restart) is waited for.
    ///
    /// - Returns: the last pass's summary (nil when no pass finished).
    /// - Throws: only for local trouble (the folder or its history cannot be
    ///   written); source trouble is reported through `events` and waited out.
    public func watch(events: @escaping @Sendable (SyncEvent) -> Void = { _ in }) async throws(FerryError)
        -> SyncPassSummary?
    {
        let lock = try await prepareDirectory()
        defer { withExtendedLifetime(lock) {} }
        let interval = options.interval ?? (isCard ? .seconds(1) : .seconds(10))
        var poller = fs.capabilities.contains(.changeDetection) ? fs.forChangePolling(interval: interval) : nil
        var state = PassState()
        var last: SyncPassSummary?
        while !Task.isCancelled {
            if let p = poller {
                do {
                    state.lastWrite = try await p.lastWriteTime()
                } catch  where error.code == .unsupportedOperation {
                    // Firmware before 2.00.02: list every interval instead.
                    poller = nil
                } catch {
                    state.lastWrite = nil
                }
            }
            do {
                let summary = try await pass(&state, watching: true, events: events)
                last = summary
                if summary.interrupted || Task.isCancelled { break }
                if summary.failures.contains(where: { SyncEngine.isSourceGone($0.error) }) {
                    markUnavailable(&state, summary.failures.first { SyncEngine.isSourceGone($0.error) }!.error, events)
                }
            } catch  where error.code == .cancelled {
                break
            } catch  where error.code == .localIO || error.code == .diskFull {
                throw error
            } catch {
                if Task.isCancelled { break }
                // A source that never answered with a listing and is not merely
                // unreachable (a folder that does not exist) is a mistake: say so.
                if last == nil && !SyncEngine.isSourceGone(error) { throw error }
                markUnavailable(&state, error, events)
            }
            events(.waiting)
            let retry = (last.map { !$0.succeeded } ?? true) ? max(interval * 5, .seconds(5)) : nil
            guard await waitForChange(&state, poller: poller, interval: interval, retryAfter: retry, events: events)
            else { break }
        }
        return last
    }

    func markUnavailable(_ state: inout PassState, _ error: FerryError, _ events: @Sendable (SyncEvent) -> Void) {
        guard !state.unavailable else { return }
        state.unavailable = true
        events(.sourceUnavailable(error))
    }

    /// Waits until the source should be listed again; false when cancelled.
    func waitForChange(
        _ state: inout PassState, poller: (any RemoteFileSystem)?, interval: Duration, retryAfter: Duration?,
        events: @Sendable (SyncEvent) -> Void
    ) async -> Bool {
        let began = ContinuousClock.now
        guard let poller else {
            return await SyncEngine.sleep(interval)
        }
        let baseline = state.lastWrite
        var previous = baseline
        var polls = 0
        while true {
            guard await SyncEngine.sleep(interval) else { return false }
            polls += 1
            let now: Duration
            do {
                now = try await poller.lastWriteTime()
                // A card swapped faster than one poll (or rebooted without a write
                // since) shows nothing in op=121: ask for the CID now and then.
                if polls % SyncEngine.identityCheckEvery == 0, let known = state.identity?.cid,
                    let cid = try await poller.mediumIdentifier(), cid.lowercased() != known
                {
                    return true
                }
            } catch {
                if Task.isCancelled { return false }
                markUnavailable(&state, error, events)
                continue
            }
            // Back after an absence: anything may have happened (even another card).
            if state.unavailable || baseline == nil { return true }
            if let baseline, now < baseline {
                events(.cardRestarted)
                return true
            }
            if now != baseline {
                if now == previous { return true }
                previous = now
                continue
            }
            if let retryAfter, ContinuousClock.now - began >= retryAfter { return true }
        }
    }

    /// How many op=121 polls go by between two op=120 (CID) checks.
    static let identityCheckEvery = 10

    /// Sleeps; false when the task was cancelled.
    static func sleep(_ d: Duration) async -> Bool {
        do {
            try await Task.sleep(for: d)
            return true
        } catch {
            return false
        }
    }
}
