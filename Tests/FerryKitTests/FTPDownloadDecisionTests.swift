import Foundation
import Testing

@testable import FerryKit

/// Every transition of `SizeAndTimeDownloadDecision`, without a server.
struct FTPDownloadDecisionTests {
    static let display = "ftp://host/pub/f.bin"

    static func journal(
        lastModified: String? = nil, totalSize: Int64? = nil, unverifiable: Bool? = nil
    ) -> DownloadJournal {
        var j = DownloadJournal(source: display, bootID: "boot")
        j.modified = lastModified.map(SourceTime.mdtm)
        j.totalSize = totalSize
        j.unverifiable = unverifiable
        return j
    }

    static func machine(offset: Int64 = 0, journal: DownloadJournal = journal(), listed: FTPListedFacts? = nil)
        -> SizeAndTimeDownloadDecision
    {
        SizeAndTimeDownloadDecision(offset: offset, journal: journal, listed: listed, display: display)
    }

    static func listed(size: Int64, utc: Bool) -> FTPListedFacts? {
        FTPListedFacts(
            RemoteEntry(
                name: "f.bin", path: "/pub/f.bin", kind: .file, size: size,
                modified: RemoteTimestamp(year: 2024, month: 5, day: 1, hour: 12, zone: utc ? .utc : .floating)))
    }

    @Test func aFreshDownloadRecordsSizeAndTime() {
        var m = Self.machine()
        let action = m.handle(.head(.init(size: 1000, modified: .mdtm("20240501120000"))))
        #expect(action == .begin(PartStart(at: 0, modified: .mdtm("20240501120000"), totalSize: 1000)))
        #expect(m.handle(.body(1000)) == .write)
        #expect(m.handle(.end(.ok(length: 1000))) == .finish)
        #expect(m.outcome == .complete(expectedSize: 1000))
    }

    @Test func aResumeWithTheSameSizeAndTimeContinues() {
        var m = Self.machine(offset: 400, journal: Self.journal(lastModified: "20240501120000", totalSize: 1000))
        // Servers differ in writing fractions of a second.
        let action = m.handle(.head(.init(size: 1000, modified: .mdtm("20240501120000.250"))))
        #expect(action == .begin(PartStart(at: 400, modified: .mdtm("20240501120000.250"), totalSize: 1000)))
        _ = m.handle(.body(600))
        _ = m.handle(.end(.ok(length: 1000)))
        #expect(m.outcome == .complete(expectedSize: 1000))
    }

    @Test(arguments: [
        (
            SizeAndTimeDownloadDecision.Facts(size: 2000, modified: .mdtm("20240501120000")),
            "size changed from 1000 to 2000"
        ),
        (
            SizeAndTimeDownloadDecision.Facts(size: 1000, modified: .mdtm("20240601120000")),
            "modification time changed from 20240501120000 to 20240601120000"
        ),
    ])
    func aChangedValidatorRestarts(facts: SizeAndTimeDownloadDecision.Facts, reason: String) {
        var m = Self.machine(offset: 400, journal: Self.journal(lastModified: "20240501120000", totalSize: 1000))
        #expect(m.handle(.head(facts)) == .stop)
        #expect(m.handle(.end(.failed(FerryError(.localIO)))) == .finish)
        #expect(m.outcome == .restart(reason: reason))
    }

    @Test func anUnverifiablePartIsStartedOver() {
        var m = Self.machine(offset: 400, journal: Self.journal(totalSize: 1000, unverifiable: true))
        #expect(m.handle(.head(.init(size: 1000, modified: nil))) == .stop)
        _ = m.handle(.end(.interrupted))
        #expect(m.outcome == .restart(reason: "nothing can tell whether the file is still the one the part came from"))
    }

    @Test func aServerWithoutSizeOrTimeLeavesThePartUnverifiable() {
        var m = Self.machine()
        #expect(m.handle(.head(.init())) == .begin(PartStart(at: 0, verifiable: false)))
        var sized = Self.machine()
        #expect(sized.handle(.head(.init(size: 5))) == .begin(PartStart(at: 0, totalSize: 5)))
    }

    @Test func aListedSizeWithoutAnExactTimeIsNoValidator() {
        // A small file listed by LIST (local time to the minute) goes without MDTM.
        var m = Self.machine(listed: Self.listed(size: 10, utc: false))
        #expect(m.skipsTimeCheck)
        #expect(m.handle(.head(.init(size: 10))) == .begin(PartStart(at: 0, totalSize: 10, verifiable: false)))
        // An MLSD time is exact: it is the validator.
        var exact = Self.machine(listed: Self.listed(size: 10, utc: true))
        #expect(
            exact.handle(.head(.init(size: 10, modified: .mdtm("20240501120000"))))
                == .begin(PartStart(at: 0, modified: .mdtm("20240501120000"), totalSize: 10)))
    }

    @Test func aTransferShorterThanItsListingIsRecordedAndRetried() {
        var m = Self.machine(listed: Self.listed(size: 1000, utc: true))
        _ = m.handle(.head(.init(size: 1000, modified: .mdtm("20240501120000"))))
        _ = m.handle(.body(600))
        #expect(m.handle(.end(.ok(length: 600))) == .recordWholeFileAndFinish)
        guard case .failed(let e) = m.outcome else {
            Issue.record("not a failure: \(m.outcome)")
            return
        }
        #expect(e.code == .verificationFailed && e.isTransient)
        #expect(e.detail == "listed as 1000 bytes, received 600")
    }

    @Test func anEmptyTransferDecidesAtTheEnd() {
        // The part already held every byte: libcurl skips RETR.
        var m = Self.machine(offset: 1000, journal: Self.journal(lastModified: "20240501120000", totalSize: 1000))
        #expect(
            m.handle(.head(.init(size: 1000, modified: .mdtm("20240501120000"))))
                == .begin(PartStart(at: 1000, modified: .mdtm("20240501120000"), totalSize: 1000)))
        #expect(m.handle(.end(.ok(length: 1000))) == .finish)
        #expect(m.outcome == .complete(expectedSize: 1000))
    }

    @Test func restPastTheEndRestarts() {
        var m = Self.machine(offset: 1000)
        _ = m.handle(.end(.restPastEnd))
        #expect(m.outcome == .restart(reason: "the file is shorter than the 1000 bytes already downloaded"))
    }

    @Test func restRefusedRestartsAResumeAndFailsAFreshDownload() {
        let error = FerryError(.protocolError, serverCode: 502, serverText: "REST not implemented")
        var resume = Self.machine(offset: 10)
        _ = resume.handle(.end(.restRefused(reply: "502 REST not implemented", error: error)))
        #expect(resume.outcome == .restart(reason: "the server cannot resume with REST (502 REST not implemented)"))
        var fresh = Self.machine()
        _ = fresh.handle(.end(.restRefused(reply: nil, error: error)))
        #expect(fresh.outcome == .failed(error))
    }

    @Test func failuresAndInterruptsAreTheOutcome() {
        let reset = FerryError(.connectionFailed, serverText: "Connection reset", isTransient: true)
        var before = Self.machine()
        _ = before.handle(.end(.failed(reset)))
        #expect(before.outcome == .failed(reset))
        var during = Self.machine()
        _ = during.handle(.head(.init(size: 10)))
        _ = during.handle(.body(3))
        _ = during.handle(.end(.interrupted))
        #expect(during.outcome == .interrupted)
    }

    @Test func aDiskErrorStopsAndWins() {
        var m = Self.machine()
        _ = m.handle(.head(.init(size: 10)))
        let full = FerryError(.diskFull)
        #expect(m.handle(.localFailure(full)) == .stop)
        _ = m.handle(.end(.failed(FerryError(.localIO))))
        #expect(m.outcome == .failed(full))
    }

    @Test func factsTwiceTrap() async {
        await #expect(processExitsWith: .failure) {
            var m = SizeAndTimeDownloadDecision(
                offset: 0, journal: DownloadJournal(source: "s", bootID: "b"), listed: nil, display: "d")
            _ = m.handle(.head(.init(size: 1)))
            _ = m.handle(.head(.init(size: 1)))
        }
    }
}
