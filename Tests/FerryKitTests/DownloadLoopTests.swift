import Foundation
import Testing

@testable import FerryKit

/// Every transition of the download loop (`DownloadLoop`) and its retry budget,
/// without a server.
struct DownloadLoopTests {
    static let display = "http://host/f.bin"

    static func loop(onDisk: Int64 = 0, maxRetries: Int = 5) -> DownloadLoop {
        DownloadLoop(onDisk: onDisk, maxRetries: maxRetries, retryDelay: .milliseconds(500), display: display)
    }

    static let reset = FerryError(.connectionFailed, serverText: "Connection reset by peer", isTransient: true)

    @Test func aCompleteAttemptFinishes() {
        var l = Self.loop()
        let a = l.attemptEnded(
            .complete(expectedSize: 10), offset: 0, begunAt: 0, bytesReceived: 10, cancelled: false)
        #expect(a == .finish(expectedSize: 10))
        l.finished()
        #expect(l.state == .done && l.transferred == 10 && l.keptFrom == 0)
        #expect(l.budget.retries == 0 && l.budget.restarts == 0)
    }

    @Test func resumedBytesThatWereContinuedAreCounted() {
        var l = Self.loop(onDisk: 700)
        _ = l.attemptEnded(
            .complete(expectedSize: 1000), offset: 700, begunAt: 700, bytesReceived: 300, cancelled: false)
        #expect(l.keptFrom == 700)
    }

    /// Issue 14 item 6: a `200` to a resume kept nothing, whatever was on disk.
    @Test func aServerIgnoringRangeKeepsNothing() {
        var l = Self.loop(onDisk: 1_048_576)
        #expect(l.keptFrom == 1_048_576)
        _ = l.attemptEnded(
            .complete(expectedSize: 2_000_000), offset: 1_048_576, begunAt: 0, bytesReceived: 2_000_000,
            cancelled: false)
        #expect(l.keptFrom == 0)
        #expect(l.budget.restarts == 1)
    }

    /// Issue 15 item 8: a pause, then a `206` from where it stopped.
    @Test func aPauseThenA206KeepsTheBytesBeforeIt() {
        var l = Self.loop()
        #expect(
            l.attemptEnded(.interrupted, offset: 0, begunAt: 0, bytesReceived: 400, cancelled: false) == .keepAndWait)
        #expect(l.keptFrom == 0)
        _ = l.attemptEnded(
            .complete(expectedSize: 1000), offset: 400, begunAt: 400, bytesReceived: 600, cancelled: false)
        #expect(l.keptFrom == 400)
        #expect(l.transferred == 1000)
        #expect(l.budget.spent == 0)
    }

    @Test func cancelledFailsWithCancelled() {
        var l = Self.loop()
        let a = l.attemptEnded(.interrupted, offset: 0, begunAt: 0, bytesReceived: 1, cancelled: true)
        #expect(a == .fail(FerryError(.cancelled, operation: "download", target: Self.display)))
        #expect(l.state == .done)
    }

    @Test func aRestartStartsOverAndIsBounded() {
        var l = Self.loop(onDisk: 500)
        for _ in 1...RetryBudget.maxRestarts {
            #expect(
                l.attemptEnded(
                    .restart(reason: "ETag changed"), offset: 500, begunAt: nil, bytesReceived: 0, cancelled: false)
                    == .startOver)
            #expect(l.keptFrom == 0)
        }
        let a = l.attemptEnded(
            .restart(reason: "ETag changed"), offset: 0, begunAt: nil, bytesReceived: 0, cancelled: false)
        #expect(
            a
                == .fail(
                    FerryError(
                        .protocolError, operation: "download", target: Self.display,
                        detail: "gave up after 5 restarts: ETag changed")))
    }

    @Test func transientFailuresBackOffDoublingThenGiveUp() {
        var l = Self.loop(maxRetries: 3)
        var delays: [Duration] = []
        for _ in 1...3 {
            guard
                case .backOff(let d) = l.attemptEnded(
                    .failed(Self.reset), offset: 0, begunAt: nil, bytesReceived: 0, cancelled: false)
            else {
                Issue.record("no back-off")
                return
            }
            delays.append(d)
        }
        #expect(delays == [.milliseconds(500), .seconds(1), .seconds(2)])
        let a = l.attemptEnded(.failed(Self.reset), offset: 0, begunAt: nil, bytesReceived: 0, cancelled: false)
        #expect(a == .gaveUp(last: Self.reset.context(operation: "download", target: Self.display), tries: 4))
        #expect(l.budget.retries == 4)
    }

    @Test func theBackOffIsCappedAtThirtySeconds() {
        var b = RetryBudget(maxRetries: 20, firstDelay: .seconds(10))
        var last = Duration.zero
        for _ in 1...5 {
            if case .again(let d) = b.failure(progressed: false) { last = d }
        }
        #expect(last == RetryPolicy.longestDelay)
    }

    @Test func progressResetsTheRowAndTheDelay() {
        var l = Self.loop(maxRetries: 2)
        _ = l.attemptEnded(.failed(Self.reset), offset: 0, begunAt: nil, bytesReceived: 0, cancelled: false)
        _ = l.attemptEnded(.failed(Self.reset), offset: 0, begunAt: nil, bytesReceived: 0, cancelled: false)
        let a = l.attemptEnded(.failed(Self.reset), offset: 0, begunAt: 0, bytesReceived: 100, cancelled: false)
        #expect(a == .backOff(.milliseconds(500)))
        #expect(l.budget.failuresInRow == 1)
    }

    /// A server that cuts every connection after a few bytes: each attempt makes
    /// progress, so the row never fills, but the transfer's budget ends it.
    @Test func progressEveryTimeStillEndsWithinTheBudget() {
        var l = Self.loop(maxRetries: 5)
        var attempts = 0
        var offset: Int64 = 0
        while true {
            attempts += 1
            let a = l.attemptEnded(
                .failed(Self.reset), offset: offset, begunAt: offset, bytesReceived: 10, cancelled: false)
            offset += 10
            if case .gaveUp(_, let tries) = a {
                #expect(tries == l.budget.limit + 1)
                break
            }
            #expect(attempts <= 100, "no end")
            if attempts > 100 { return }
        }
        #expect(attempts == RetryBudget.maxRestarts + 4 * 5 + 1)
    }

    /// Restarts and retries spend from one budget.
    @Test func restartsAndRetriesShareTheBudget() {
        var l = Self.loop(maxRetries: 0)
        #expect(l.budget.limit == RetryBudget.maxRestarts)
        for _ in 1...4 {
            #expect(
                l.attemptEnded(.restart(reason: "r"), offset: 5, begunAt: nil, bytesReceived: 0, cancelled: false)
                    == .startOver)
        }
        // No retries allowed: the first failure ends it.
        let a = l.attemptEnded(.failed(Self.reset), offset: 0, begunAt: nil, bytesReceived: 0, cancelled: false)
        #expect(a == .gaveUp(last: Self.reset.context(operation: "download", target: Self.display), tries: 1))
        var b = RetryBudget(maxRetries: 1, firstDelay: .zero)
        for _ in 1...5 { _ = b.restart() }
        #expect(b.failure(progressed: true) == .again(after: .zero))
        #expect(b.failure(progressed: true) == .again(after: .zero))
        #expect(b.failure(progressed: true) == .again(after: .zero))
        #expect(b.failure(progressed: true) == .again(after: .zero))
        #expect(b.failure(progressed: true) == .exhaustedInAll(attempts: 10))
    }

    @Test(arguments: [
        FerryError(.notFound, serverCode: 404, serverText: "Not Found"),
        FerryError(.authenticationFailed, serverCode: 401, serverText: "Unauthorized"),
        FerryError(.permissionDenied, serverCode: 550, serverText: "Permission denied"),
        FerryError(.tls, serverText: "certificate verify failed"),
        FerryError(.diskFull, target: "/x.part"),
        FerryError(.connectionFailed, serverText: "Could not resolve host", detail: "check the host name"),
    ])
    func permanentFailuresFailAtOnce(error: FerryError) {
        var l = Self.loop()
        let a = l.attemptEnded(.failed(error), offset: 0, begunAt: nil, bytesReceived: 0, cancelled: false)
        #expect(a == .fail(error.context(operation: "download", target: Self.display)))
        #expect(l.budget.retries == 0)
    }

    @Test(arguments: [
        FerryError(.timedOut, serverText: "Operation timed out", isTransient: true),
        FerryError(.serverError, serverCode: 503, serverText: "Service Unavailable", isTransient: true),
        FerryError(.serverError, serverCode: 421, serverText: "Too many connections", isTransient: true),
        FerryError(.connectionFailed, serverText: "Connection reset by peer", isTransient: true),
        FerryError(.tls, serverText: "SSL connect error", isTransient: true),
    ])
    func transientFailuresAreRetried(error: FerryError) {
        var l = Self.loop()
        let a = l.attemptEnded(.failed(error), offset: 0, begunAt: nil, bytesReceived: 0, cancelled: false)
        #expect(a == .backOff(.milliseconds(500)))
    }

    @Test func refusedBeforeTheFirstByteFailsAtOnceButNotMidFile() {
        var refused = FerryError(.connectionFailed, serverText: "Connection refused", isTransient: true)
        refused.wasRefused = true
        var fresh = Self.loop()
        guard
            case .fail(let e) = fresh.attemptEnded(
                .failed(refused), offset: 0, begunAt: nil, bytesReceived: 0, cancelled: false)
        else {
            Issue.record("a refusal before the first byte was retried")
            return
        }
        #expect(!e.isTransient)
        // With bytes on disk (a resume) or after bytes arrived, the server is restarting.
        var resumed = Self.loop(onDisk: 100)
        #expect(
            resumed.attemptEnded(.failed(refused), offset: 100, begunAt: nil, bytesReceived: 0, cancelled: false)
                == .backOff(.milliseconds(500)))
        var midFile = Self.loop()
        _ = midFile.attemptEnded(.failed(Self.reset), offset: 0, begunAt: 0, bytesReceived: 50, cancelled: false)
        #expect(
            midFile.attemptEnded(.failed(refused), offset: 50, begunAt: nil, bytesReceived: 0, cancelled: false)
                == .backOff(.seconds(1)))
    }

    @Test func aShortFileIsRetriedWithinTheBudget() {
        let short = FerryError(
            .verificationFailed, operation: "download", target: "x", detail: "got 5 bytes, expected 10",
            isTransient: true)
        var l = Self.loop(maxRetries: 1)
        _ = l.attemptEnded(.complete(expectedSize: 10), offset: 0, begunAt: 0, bytesReceived: 5, cancelled: false)
        #expect(l.finishFailed(short) == .backOff(.milliseconds(500)))
        #expect(l.state == .attempting)
        _ = l.attemptEnded(.complete(expectedSize: 10), offset: 5, begunAt: 5, bytesReceived: 0, cancelled: false)
        #expect(l.finishFailed(short) == .gaveUp(last: short, tries: 2))
    }

    @Test func aRenameFailureFailsAtOnce() {
        let exists = FerryError(.destinationExists, operation: "rename", target: "x")
        var l = Self.loop()
        _ = l.attemptEnded(.complete(expectedSize: nil), offset: 0, begunAt: 0, bytesReceived: 5, cancelled: false)
        #expect(l.finishFailed(exists) == .fail(exists))
        #expect(l.state == .done)
    }

    @Test func anAttemptEndingWhileFinishingTraps() async {
        await #expect(processExitsWith: .failure) {
            var l = DownloadLoop(onDisk: 0, maxRetries: 1, retryDelay: .zero, display: "d")
            _ = l.attemptEnded(.complete(expectedSize: 1), offset: 0, begunAt: 0, bytesReceived: 1, cancelled: false)
            _ = l.attemptEnded(.interrupted, offset: 0, begunAt: nil, bytesReceived: 0, cancelled: false)
        }
    }

    @Test func aCardThatStaysSilentIsNotAnswering() {
        let silent = FerryError(.timedOut, operation: "download", target: "flashair://card/a.jpg", isTransient: true)
        let e = FlashAirFileSystem.cardError(silent, tries: 6)
        #expect(e.code == .notAnswering)
        #expect(e.serverText == "card not answering after 6 tries")
        let notFound = FerryError(.notFound, operation: "download", target: "flashair://card/a.jpg", serverCode: 404)
        #expect(FlashAirFileSystem.cardError(notFound, tries: 1).detail == "gave up after 1 tries")
    }
}
