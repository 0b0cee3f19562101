import Foundation
import Testing

@testable import FerryKit

/// Every transition of `HTTPDownloadDecision`, without a server.
struct HTTPDownloadDecisionTests {
    static let display = "http://host/f.bin"

    static func journal(
        etag: String? = nil, lastModified: String? = nil, totalSize: Int64? = nil, finalSource: String? = nil
    ) -> DownloadJournal {
        var j = DownloadJournal(source: display, bootID: "boot")
        j.etag = etag
        j.modified = lastModified.map(SourceTime.httpDate)
        j.totalSize = totalSize
        j.finalSource = finalSource
        return j
    }

    static func head(_ status: Int, _ fields: [String] = [], reason: String = "", finalSource: String? = nil)
        -> HTTPDownloadDecision.Head
    {
        var h = HTTPHeaders()
        h.consume(line: "HTTP/1.1 \(status) \(reason)\r\n")
        for f in fields { h.consume(line: f + "\r\n") }
        return HTTPDownloadDecision.Head(status: status, headers: h, finalSource: finalSource)
    }

    static func machine(offset: Int64 = 0, journal: DownloadJournal = journal()) -> HTTPDownloadDecision {
        HTTPDownloadDecision(offset: offset, journal: journal, display: display)
    }

    /// Feeds a head, then ends the attempt the way the adapter would.
    static func outcome(
        offset: Int64, journal: DownloadJournal, _ head: HTTPDownloadDecision.Head
    ) -> (HTTPDownloadDecision.Action, AttemptOutcome) {
        var m = machine(offset: offset, journal: journal)
        let action = m.handle(.head(head))
        _ = m.handle(.end(.ok))
        return (action, m.outcome)
    }

    @Test func aFreshDownloadBeginsAtZeroWithTheValidators() {
        var m = Self.machine()
        let action = m.handle(
            .head(
                Self.head(
                    200, ["ETag: \"v1\"", "Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT", "Content-Length: 1000"])))
        #expect(
            action
                == .begin(
                    PartStart(
                        at: 0, etag: "\"v1\"", modified: .httpDate("Mon, 01 Jan 2024 00:00:00 GMT"), totalSize: 1000)))
        #expect(m.totalSize == 1000)
        #expect(m.handle(.body(500)) == .write)
        #expect(m.handle(.body(500)) == .write)
        #expect(m.handle(.end(.ok)) == .finish)
        #expect(m.outcome == .complete(expectedSize: 1000))
    }

    @Test func a200ToARangedRequestStartsTheFileOverInPlace() {
        var m = Self.machine(offset: 700_000, journal: Self.journal(etag: "\"v1\"", totalSize: 2_000_000))
        let action = m.handle(.head(Self.head(200, ["ETag: \"v2\"", "Content-Length: 2000000"])))
        #expect(action == .begin(PartStart(at: 0, etag: "\"v2\"", totalSize: 2_000_000)))
        #expect(m.handle(.end(.ok)) == .finish)
        #expect(m.outcome == .complete(expectedSize: 2_000_000))
    }

    @Test func a206FromTheAskedOffsetContinuesThePart() {
        var m = Self.machine(offset: 400, journal: Self.journal(etag: "\"v1\"", totalSize: 1000))
        let action = m.handle(.head(Self.head(206, ["ETag: \"v1\"", "Content-Range: bytes 400-999/1000"])))
        #expect(action == .begin(PartStart(at: 400, etag: "\"v1\"", totalSize: 1000)))
        #expect(m.handle(.body(600)) == .write)
        _ = m.handle(.end(.ok))
        #expect(m.outcome == .complete(expectedSize: 1000))
    }

    @Test func a206WithoutNewValidatorsKeepsTheJournals() {
        let j = Self.journal(etag: "\"v1\"", lastModified: "Mon, 01 Jan 2024 00:00:00 GMT", totalSize: 1000)
        var m = Self.machine(offset: 10, journal: j)
        let action = m.handle(.head(Self.head(206, ["Content-Range: bytes 10-999/*"])))
        #expect(
            action
                == .begin(
                    PartStart(
                        at: 10, etag: "\"v1\"", modified: .httpDate("Mon, 01 Jan 2024 00:00:00 GMT"), totalSize: 1000)))
    }

    @Test(arguments: [
        (["Content-Range: bytes 0-999/1000"], "asked for bytes from 400, got them from 0"),
        (["Content-Range: bytes 500-999/1000"], "asked for bytes from 400, got them from 500"),
        ([], "206 without a valid Content-Range"),
        (["Content-Range: bytes 999-400/1000"], "206 without a valid Content-Range"),
        (
            ["Content-Type: multipart/byteranges; boundary=x", "Content-Range: bytes 400-999/1000"],
            "206 with a multipart body"
        ),
        (["ETag: \"v2\"", "Content-Range: bytes 400-999/1000"], "ETag changed"),
        (["Content-Range: bytes 400-1999/2000"], "size changed from 1000 to 2000"),
    ])
    func a206ThatCannotContinueThePartRestarts(fields: [String], reason: String) {
        let (action, outcome) = Self.outcome(
            offset: 400, journal: Self.journal(etag: "\"v1\"", totalSize: 1000), Self.head(206, fields))
        #expect(action == .stop)
        #expect(outcome == .restart(reason: reason))
    }

    @Test func aChangedLastModifiedRestartsOnlyWithoutAnETag() {
        let old = "Mon, 01 Jan 2024 00:00:00 GMT"
        let fields = ["Last-Modified: Tue, 02 Jan 2024 00:00:00 GMT", "Content-Range: bytes 5-9/10"]
        let (_, byDate) = Self.outcome(offset: 5, journal: Self.journal(lastModified: old), Self.head(206, fields))
        #expect(byDate == .restart(reason: "Last-Modified changed"))
        // With an ETag recorded, the ETag is the validator (If-Range sent it).
        let (action, _) = Self.outcome(
            offset: 5, journal: Self.journal(etag: "\"a\"", lastModified: old), Self.head(206, fields))
        #expect(
            action
                == .begin(
                    PartStart(at: 5, etag: "\"a\"", modified: .httpDate("Tue, 02 Jan 2024 00:00:00 GMT"), totalSize: 10)
                )
        )
    }

    @Test func aRedirectElsewhereWithoutAValidatorRestarts() {
        let fields = ["Content-Range: bytes 5-9/10"]
        let (_, moved) = Self.outcome(
            offset: 5, journal: Self.journal(), Self.head(206, fields, finalSource: "http://mirror/f.bin"))
        #expect(moved == .restart(reason: "redirected to http://mirror/f.bin, not where the bytes came from"))
        // The same place as before continues.
        let (same, _) = Self.outcome(
            offset: 5, journal: Self.journal(finalSource: "http://mirror/f.bin"),
            Self.head(206, fields, finalSource: "http://mirror/f.bin"))
        #expect(same == .begin(PartStart(at: 5, totalSize: 10, finalSource: "http://mirror/f.bin")))
        // A validator vouches for the bytes wherever they come from.
        let (vouched, _) = Self.outcome(
            offset: 5, journal: Self.journal(etag: "\"v\""),
            Self.head(206, ["ETag: \"v\""] + fields, finalSource: "http://mirror/f.bin"))
        #expect(vouched == .begin(PartStart(at: 5, etag: "\"v\"", totalSize: 10, finalSource: "http://mirror/f.bin")))
    }

    @Test func a416AtTheEndMeansTheFileWasComplete() {
        let (action, outcome) = Self.outcome(
            offset: 1000, journal: Self.journal(totalSize: 1000), Self.head(416, ["Content-Range: bytes */1000"]))
        #expect(action == .stop)
        #expect(outcome == .complete(expectedSize: 1000))
        // The size not recorded yet: the server's word is enough.
        let (_, unknown) = Self.outcome(
            offset: 1000, journal: Self.journal(), Self.head(416, ["Content-Range: bytes */1000"]))
        #expect(unknown == .complete(expectedSize: 1000))
    }

    @Test(arguments: [
        (Int64(1000), Int64?(2000), ["Content-Range: bytes */1000"]),
        (Int64(1000), Int64?.none, ["Content-Range: bytes */500"]),
        (Int64(1000), Int64?.none, [String]()),
    ])
    func a416ForARangeTheFileNoLongerHasRestarts(offset: Int64, recorded: Int64?, fields: [String]) {
        let (_, outcome) = Self.outcome(
            offset: offset, journal: Self.journal(totalSize: recorded), Self.head(416, fields))
        #expect(outcome == .restart(reason: "416 for a range the file no longer has"))
    }

    @Test func a416ToAWholeFileRequestIsAnError() {
        let (_, outcome) = Self.outcome(offset: 0, journal: Self.journal(), Self.head(416, [], reason: "Nope"))
        #expect(outcome == .failed(.http(status: 416, reason: "Nope", operation: "download", target: Self.display)))
    }

    @Test(arguments: [
        (404, FerryError.Code.notFound, false), (503, .serverError, true), (401, .authenticationFailed, false),
    ])
    func errorStatusesFailWithTheServersWords(status: Int, code: FerryError.Code, transient: Bool) {
        let (action, outcome) = Self.outcome(offset: 0, journal: Self.journal(), Self.head(status, [], reason: "Why"))
        #expect(action == .stop)
        guard case .failed(let e) = outcome else {
            Issue.record("not a failure: \(outcome)")
            return
        }
        #expect(e.code == code && e.isTransient == transient && e.serverCode == status && e.serverText == "Why")
    }

    @Test func aFinalStatusOutsideTwoHundredsIsAProtocolError() {
        let (_, outcome) = Self.outcome(offset: 0, journal: Self.journal(), Self.head(304, [], reason: "Not Modified"))
        #expect(
            outcome
                == .failed(
                    FerryError(
                        .protocolError, operation: "download", target: Self.display, serverCode: 304,
                        serverText: "Not Modified")))
    }

    @Test func aShortBodyEndsWithLibcurlsFailure() {
        var m = Self.machine()
        _ = m.handle(.head(Self.head(200, ["Content-Length: 1000"])))
        _ = m.handle(.body(300))
        let cut = FerryError(
            .connectionFailed, serverText: "transfer closed with 700 bytes remaining", isTransient: true)
        #expect(m.handle(.end(.failed(cut))) == .finish)
        #expect(m.outcome == .failed(cut))
    }

    @Test func aFailureBeforeTheHeadIsTheOutcome() {
        var m = Self.machine(offset: 10)
        let timeout = FerryError(.timedOut, isTransient: true)
        _ = m.handle(.end(.failed(timeout)))
        #expect(m.outcome == .failed(timeout))
    }

    @Test func interruptedBeforeOrDuringTheBody() {
        var before = Self.machine(offset: 10)
        _ = before.handle(.end(.interrupted))
        #expect(before.outcome == .interrupted)
        var during = Self.machine()
        _ = during.handle(.head(Self.head(200)))
        _ = during.handle(.body(1))
        _ = during.handle(.end(.interrupted))
        #expect(during.outcome == .interrupted)
    }

    @Test func aDiskErrorStopsAndLibcurlsAbortIsIgnored() {
        var m = Self.machine()
        _ = m.handle(.head(Self.head(200)))
        _ = m.handle(.body(10))
        let full = FerryError(.diskFull, target: "/x.part")
        #expect(m.handle(.localFailure(full)) == .stop)
        #expect(m.handle(.end(.failed(FerryError(.localIO, detail: "write callback aborted")))) == .finish)
        #expect(m.outcome == .failed(full))
    }

    @Test func aDecidedRestartSurvivesAnInterruptArrivingAfterIt() {
        var m = Self.machine(offset: 5, journal: Self.journal(etag: "\"a\""))
        _ = m.handle(.head(Self.head(206, ["ETag: \"b\"", "Content-Range: bytes 5-9/10"])))
        _ = m.handle(.end(.interrupted))
        #expect(m.outcome == .restart(reason: "ETag changed"))
    }

    @Test func theOutcomeBeforeTheEndTraps() async {
        await #expect(processExitsWith: .failure) {
            let m = HTTPDownloadDecision(
                offset: 0, journal: DownloadJournal(source: "s", bootID: "b"), display: "d")
            _ = m.outcome
        }
    }

    @Test func bytesBeforeTheHeadTrap() async {
        await #expect(processExitsWith: .failure) {
            var m = HTTPDownloadDecision(
                offset: 0, journal: DownloadJournal(source: "s", bootID: "b"), display: "d")
            _ = m.handle(.body(1))
        }
    }
}
