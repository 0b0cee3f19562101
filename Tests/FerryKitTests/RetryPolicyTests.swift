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

    /// The listing policy: four retries, 250 ms doubling, then the failure itself.
    @Test func retryingTriesAgainThenThrowsTheLastFailure() async {
        let policy = RetryPolicy(firstDelay: .milliseconds(1), maxInRow: 4)
        var tries = 0
        let reset = FerryError(.connectionFailed, serverText: "reset", isTransient: true)
        do throws(FerryError) {
            let _: Int = try await policy.retrying(cancelled: FerryError(.cancelled)) { () throws(FerryError) in
                tries += 1
                throw reset
            }
            Issue.record("no failure")
        } catch {
            #expect(error == reset)
        }
        #expect(tries == 5)
    }

    @Test func retryingThrowsAPermanentFailureAtOnce() async {
        let policy = RetryPolicy(firstDelay: .milliseconds(1), maxInRow: 4)
        var tries = 0
        do throws(FerryError) {
            let _: Int = try await policy.retrying(
                cancelled: FerryError(.cancelled), gaveUp: Self.notAnswering
            ) { () throws(FerryError) in
                tries += 1
                throw FerryError(.permissionDenied)
            }
        } catch {
            #expect(error.code == .permissionDenied)
        }
        #expect(tries == 1)
    }

    @Test func retryingSaysHowManyTriesWhenItGivesUp() async {
        let policy = RetryPolicy(firstDelay: .milliseconds(1), maxInRow: 2)
        var tries = 0
        do throws(FerryError) {
            let _: Int = try await policy.retrying(
                cancelled: FerryError(.cancelled), gaveUp: Self.notAnswering
            ) { () throws(FerryError) in
                tries += 1
                if tries == 2 { return 7 }
                throw FerryError(.timedOut, isTransient: true)
            }
            #expect(tries == 2)
        } catch {
            Issue.record("gave up: \(error)")
        }
        do throws(FerryError) {
            let _: Int = try await policy.retrying(
                cancelled: FerryError(.cancelled), gaveUp: Self.notAnswering
            ) { () throws(FerryError) in throw FerryError(.timedOut, isTransient: true) }
        } catch {
            #expect(error.code == .notAnswering && error.detail == "3")
        }
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
