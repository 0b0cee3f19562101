import Foundation
import Testing

@testable import FerryKit

/// The one retry decision (`RetryPolicy`) and the one overwrite decision
/// (`OverwriteDecision`), as transition tables, without a server.
struct RetryPolicyTests {
    /// A give-up error that says how many tries were made.
    static func notAnswering(_ last: FerryError, _ tries: Int) -> FerryError {
        FerryError(.notAnswering, detail: "\(tries)")
    }

    /// Failure in a row → the decision, for a transfer's policy (0.5 s, doubling, 30 s cap, 7 retries).
    @Test func aTransfersDelaysDoubleUpToTheCap() {
        let policy = RetryPolicy(firstDelay: .milliseconds(500), maxInRow: 7)
        let table: [(Int, RetryPolicy.Next)] = [
            (1, .retry(after: .milliseconds(500))),
            (2, .retry(after: .seconds(1))),
            (3, .retry(after: .seconds(2))),
            (4, .retry(after: .seconds(4))),
            (5, .retry(after: .seconds(8))),
            (6, .retry(after: .seconds(16))),
            (7, .retry(after: .seconds(30))),
            (8, .giveUp(tries: 8)),
            (9, .giveUp(tries: 9)),
        ]
        for (failure, expected) in table {
            #expect(policy.next(after: failure) == expected, "failure \(failure)")
        }
    }

    @Test func zeroRetriesGivesUpAtTheFirstFailure() {
        #expect(RetryPolicy(firstDelay: .seconds(1), maxInRow: 0).next(after: 1) == .giveUp(tries: 1))
        #expect(RetryPolicy(firstDelay: .seconds(1), maxInRow: -3).maxInRow == 0)
    }

    /// A card's CGI policy: its own cap, three tries (two retries).
    @Test func aCardsCapAndTries() {
        let policy = RetryPolicy(firstDelay: .seconds(4), cap: .seconds(10), maxInRow: 2)
        #expect(policy.next(after: 1) == .retry(after: .seconds(4)))
        #expect(policy.next(after: 2) == .retry(after: .seconds(8)))
        #expect(policy.next(after: 3) == .giveUp(tries: 3))
        #expect(RetryPolicy(firstDelay: .seconds(4), cap: .seconds(10), maxInRow: 9).delay(after: 3) == .seconds(10))
    }

    /// A first delay set longer than the cap is kept; the next ones are the cap.
    @Test func aLongFirstDelayIsKeptThenCapped() {
        let policy = RetryPolicy(firstDelay: .seconds(60), maxInRow: 3)
        #expect(policy.delay(after: 1) == .seconds(60))
        #expect(policy.delay(after: 2) == .seconds(30))
        #expect(policy.delay(after: 3) == .seconds(30))
    }

    @Test func noDelayStaysNone() {
        let policy = RetryPolicy(firstDelay: .zero, maxInRow: 3)
        #expect((1...3).map(policy.delay(after:)) == [.zero, .zero, .zero])
    }

    /// A huge row does not overflow: the delay stops growing at the cap.
    @Test func aLongRowStaysAtTheCap() {
        #expect(RetryPolicy(firstDelay: .milliseconds(1), maxInRow: 100_000).delay(after: 100_000) == .seconds(30))
    }

    /// Runs `retrying` with attempts that fail as `failures` says, in order
    /// (nil: succeed with 7); the result or the error thrown, and the tries made.
    static func run(_ policy: RetryPolicy, _ failures: [FerryError?], gaveUp: Bool = false) async
        -> (result: Result<Int, FerryError>, tries: Int)
    {
        var tries = 0
        func attempt() throws(FerryError) -> Int {
            let failure = tries < failures.count ? failures[tries] : failures.last ?? nil
            tries += 1
            if let failure { throw failure }
            return 7
        }
        do throws(FerryError) {
            let value =
                gaveUp
                ? try await policy.retrying(cancelled: FerryError(.cancelled), gaveUp: Self.notAnswering, attempt)
                : try await policy.retrying(cancelled: FerryError(.cancelled), attempt)
            return (.success(value), tries)
        } catch {
            return (.failure(error), tries)
        }
    }

    static let reset = FerryError(.connectionFailed, serverText: "reset", isTransient: true)

    /// The listing's policy (four retries): five tries, then the last failure itself.
    @Test func retryingTriesAgainThenThrowsTheLastFailure() async {
        let (result, tries) = await Self.run(RetryPolicy(firstDelay: .milliseconds(1), maxInRow: 4), [Self.reset])
        #expect(result == .failure(Self.reset) && tries == 5)
    }

    @Test func retryingThrowsAPermanentFailureAtOnce() async {
        let (result, tries) = await Self.run(
            RetryPolicy(firstDelay: .milliseconds(1), maxInRow: 4), [FerryError(.permissionDenied)], gaveUp: true)
        #expect(result == .failure(FerryError(.permissionDenied)) && tries == 1)
    }

    @Test func retryingSucceedsAfterAFailureAndSaysHowManyTriesWhenItGivesUp() async {
        let policy = RetryPolicy(firstDelay: .milliseconds(1), maxInRow: 2)
        let recovered = await Self.run(policy, [Self.reset, nil], gaveUp: true)
        #expect(recovered.result == .success(7) && recovered.tries == 2)
        let gaveUp = await Self.run(policy, [Self.reset], gaveUp: true)
        #expect(gaveUp.result == .failure(FerryError(.notAnswering, detail: "3")) && gaveUp.tries == 3)
    }

    /// A cancelled task tries no more.
    @Test func retryingStopsWhenTheTaskIsCancelled() async {
        let task = Task { await Self.run(RetryPolicy(firstDelay: .seconds(5), maxInRow: 4), [Self.reset]) }
        task.cancel()
        let (result, tries) = await task.value
        #expect(result == .failure(FerryError(.cancelled)) && tries <= 1)
    }

    /// What the destination holds × the policy → the decision.
    @Test func theOverwriteDecisionTable() {
        let table: [(OverwriteDecision.Found, OverwritePolicy, OverwriteDecision)] = [
            (.nothing, .fail, .write), (.nothing, .skip, .write), (.nothing, .overwrite, .write),
            (.file(size: 3), .fail, .refuse), (.file(size: 3), .skip, .keep), (.file(size: nil), .overwrite, .write),
            (.folder, .fail, .folderInTheWay), (.folder, .skip, .folderInTheWay),
            (.folder, .overwrite, .folderInTheWay),
        ]
        for (found, policy, expected) in table {
            #expect(OverwriteDecision.decide(found, policy: policy) == expected, "\(found) \(policy)")
        }
    }

    @Test func checkCarriesTheDecisionOut() throws {
        let started = ContinuousClock.now
        let folder = OverwriteDecision.remoteFolder("ftp://h/x")
        #expect(
            try OverwriteDecision.check(
                .nothing, policy: .fail, operation: "upload", source: "x", destination: "ftp://h/x", started: started,
                folder: folder) == nil)
        let skipped = try OverwriteDecision.check(
            .file(size: 42), policy: .skip, operation: "upload", source: "x", destination: "ftp://h/x",
            started: started, folder: folder)
        #expect(skipped?.skipped == true && skipped?.size == 42 && skipped?.bytesTransferred == 0)
        #expect(
            throws: FerryError(
                .destinationExists, operation: "upload", target: "ftp://h/x", recovery: .replaceOrKeep)
        ) {
            try OverwriteDecision.check(
                .file(size: 42), policy: .fail, operation: "upload", source: "x", destination: "ftp://h/x",
                started: started, folder: folder)
        }
        #expect(throws: folder) {
            try OverwriteDecision.check(
                .folder, policy: .overwrite, operation: "upload", source: "x", destination: "ftp://h/x",
                started: started, folder: folder)
        }
        #expect(OverwriteDecision.found(nil) == .nothing)
    }
}
