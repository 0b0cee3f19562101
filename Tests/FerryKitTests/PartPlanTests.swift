import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// Every transition of `PartPlan` (the file operations a `.part` needs for each
/// event, and its phase), without a file; then random runs against a model of
/// the disk that checks the two invariants: the journal only after its bytes,
/// the final name only after the flush.
struct PartPlanTests {
    typealias Op = PartPlan.Op

    /// A plan in `phase`, reached through the operations that lead there.
    static func plan(_ phase: PartPlan.Phase) -> PartPlan {
        var p = PartPlan(stream: phase == .stream)
        switch phase {
        case .unopened, .stream: break
        case .unnamed: p.opened(.nothing)
        case .named: p.opened(.part(size: 0, resumable: nil, staleJournal: false))
        case .journaled: p.opened(.part(size: 10, resumable: 10, staleJournal: false))
        case .finished:
            p.opened(.nothing)
            p.did(.linkFinal)
        case .closed:
            p.opened(.nothing)
            p.did(.close)
        }
        #expect(p.phase == phase)
        return p
    }

    @Test func openingFindsNothingAndWritesToAnUnnamedFile() {
        var p = PartPlan(stream: false)
        #expect(p.ops(for: .opened(.nothing)) == [])
        p.opened(.nothing)
        #expect(p.phase == .unnamed && !p.isNamed && p.isOpen)
    }

    @Test func aResumablePartIsCutToItsTrustedLengthAndKeepsItsJournal() {
        var p = PartPlan(stream: false)
        let found = PartPlan.Found.part(size: 5000, resumable: 4096, staleJournal: false)
        #expect(p.ops(for: .opened(found)) == [.truncate(4096)])
        p.opened(found)
        #expect(p.phase == .journaled)
        // Same boot: the whole part is trusted; the cut to its own length puts
        // the descriptor at its end, where the bytes go on.
        #expect(
            PartPlan(stream: false).ops(for: .opened(.part(size: 5000, resumable: 5000, staleJournal: false)))
                == [.truncate(5000)])
    }

    @Test func aPartThatCannotResumeLosesItsStaleJournalBeforeItsBytes() {
        var p = PartPlan(stream: false)
        let found = PartPlan.Found.part(size: 5000, resumable: nil, staleJournal: true)
        #expect(p.ops(for: .opened(found)) == [.removeJournal, .truncate(0)])
        p.opened(found)
        #expect(p.phase == .named)
        #expect(
            PartPlan(stream: false).ops(for: .opened(.part(size: 0, resumable: nil, staleJournal: false))) == [])
    }

    @Test func beginningOverRemovesTheJournalBeforeCuttingTheFile() {
        let p = Self.plan(.journaled)
        #expect(
            p.ops(for: .begin(offset: 0, length: 700, validatorsChanged: true))
                == [.writeBuffer, .removeJournal, .truncate(0)])
        #expect(p.ops(for: .begin(offset: 0, length: 0, validatorsChanged: true)) == [.writeBuffer, .removeJournal])
    }

    @Test func continuingRecordsChangedValidatorsInTheJournalOnlyWhenThereIsOne() {
        let j = Self.plan(.journaled)
        #expect(j.ops(for: .begin(offset: 700, length: 700, validatorsChanged: true)) == [.writeBuffer, .saveJournal])
        #expect(j.ops(for: .begin(offset: 700, length: 700, validatorsChanged: false)) == [.writeBuffer])
        #expect(
            j.ops(for: .begin(offset: 500, length: 700, validatorsChanged: false)) == [.writeBuffer, .truncate(500)])
        for phase in [PartPlan.Phase.unnamed, .named] {
            let p = Self.plan(phase)
            #expect(p.ops(for: .begin(offset: 0, length: 0, validatorsChanged: true)) == [.writeBuffer])
            #expect(
                p.ops(for: .begin(offset: 0, length: 300, validatorsChanged: true)) == [.writeBuffer, .truncate(0)])
        }
        #expect(Self.plan(.stream).ops(for: .begin(offset: 0, length: 0, validatorsChanged: true)) == [.writeBuffer])
    }

    @Test func aGrowingFileGetsItsPartNameOnce() {
        var p = Self.plan(.unnamed)
        let ops = p.ops(for: .growing)
        #expect(ops == [.removeJournal, .linkPart])
        for op in ops { p.did(op) }
        #expect(p.phase == .named && p.isNamed)
        #expect(p.ops(for: .growing) == [])
        #expect(Self.plan(.stream).ops(for: .growing) == [])
    }

    @Test func theFirstJournalNamesThePartFirst() {
        var p = Self.plan(.unnamed)
        let ops = p.ops(for: .journalDue)
        #expect(ops == [.removeJournal, .linkPart, .saveJournal])
        for op in ops { p.did(op) }
        #expect(p.phase == .journaled)
        #expect(p.ops(for: .journalDue) == [])
        #expect(Self.plan(.named).ops(for: .journalDue) == [.saveJournal])
        #expect(Self.plan(.stream).ops(for: .journalDue) == [])
    }

    @Test func aCheckpointWritesThenSyncsThenJournals() {
        #expect(
            Self.plan(.unnamed).ops(for: .checkpoint(length: 10, durable: 0))
                == [.removeJournal, .linkPart, .writeBuffer, .syncData, .saveJournal])
        #expect(
            Self.plan(.journaled).ops(for: .checkpoint(length: 10, durable: 0))
                == [.writeBuffer, .syncData, .saveJournal])
        // Nothing new since the last sync: only the journal (its validators may have changed).
        #expect(
            Self.plan(.journaled).ops(for: .checkpoint(length: 10, durable: 10)) == [.writeBuffer, .saveJournal])
        // Nothing to keep: no name, no journal.
        #expect(Self.plan(.unnamed).ops(for: .checkpoint(length: 0, durable: 0)) == [])
        #expect(Self.plan(.stream).ops(for: .checkpoint(length: 10, durable: 0)) == [.writeBuffer])
        #expect(Self.plan(.closed).ops(for: .checkpoint(length: 10, durable: 0)) == [])
    }

    @Test func theFlusherTakesOnlyAFileWithNothingLeftToCheck() {
        for phase in [PartPlan.Phase.unnamed, .named, .journaled] {
            #expect(Self.plan(phase).ops(for: .handOver(ready: true)) == [.syncOnFlusher])
            #expect(Self.plan(phase).ops(for: .handOver(ready: false)) == [])
        }
        #expect(Self.plan(.stream).ops(for: .handOver(ready: true)) == [])
        #expect(Self.plan(.closed).ops(for: .handOver(ready: true)) == [])
    }

    @Test func aSmallFileIsLinkedUnderItsNameAfterItsFlush() {
        var p = Self.plan(.unnamed)
        let ops = p.ops(for: .finish(replacing: false, flushedEarly: false))
        #expect(ops == [.writeBuffer, .verifySize, .stampTime, .sync, .checksum, .linkFinal, .close])
        for op in ops { p.did(op) }
        #expect(p.phase == .finished && !p.isOpen)
        // Flushed on the flusher thread: only the name is left.
        #expect(
            Self.plan(.unnamed).ops(for: .finish(replacing: false, flushedEarly: true))
                == [.checksum, .linkFinal, .close])
    }

    @Test func replacingAFileGoesThroughThePartAndARename() {
        #expect(
            Self.plan(.unnamed).ops(for: .finish(replacing: true, flushedEarly: false))
                == [
                    .writeBuffer, .verifySize, .stampTime, .sync, .checksum, .removeJournal, .linkPart, .close,
                    .rename(replacing: true),
                ])
    }

    @Test func aJournaledPartIsRenamedAndItsJournalRemovedAfter() {
        var p = Self.plan(.journaled)
        let ops = p.ops(for: .finish(replacing: false, flushedEarly: false))
        #expect(
            ops == [
                .writeBuffer, .verifySize, .stampTime, .sync, .checksum, .close, .rename(replacing: false),
                .removeJournal,
            ])
        for op in ops { p.did(op) }
        #expect(p.phase == .finished)
        #expect(p.ops(for: .checkpoint(length: 10, durable: 0)) == [])
        #expect(p.ops(for: .settle(written: 10)) == [])
    }

    @Test func aStreamIsOnlyWrittenCheckedAndLeftOpen() {
        #expect(
            Self.plan(.stream).ops(for: .finish(replacing: false, flushedEarly: false))
                == [.writeBuffer, .verifySize, .close])
        #expect(Self.plan(.stream).ops(for: .settle(written: 0)) == [.writeBuffer, .close])
    }

    @Test func aFailureKeepsBytesWorthResumingAndRemovesAnEmptyPart() {
        #expect(Self.plan(.unnamed).ops(for: .settle(written: 0)) == [.close])
        #expect(Self.plan(.named).ops(for: .settle(written: 0)) == [.close, .removePart])
        #expect(Self.plan(.named).ops(for: .settle(written: 5)) == [.close])
        #expect(Self.plan(.journaled).ops(for: .settle(written: 0)) == [.close, .removePart, .removeJournal])
        var p = Self.plan(.journaled)
        for op in p.ops(for: .settle(written: 5)) { p.did(op) }
        #expect(p.phase == .closed && !p.isOpen)
    }

    @Test func nothingHappensToAPartNotOpenedYet() {
        let p = PartPlan(stream: false)
        #expect(p.ops(for: .checkpoint(length: 0, durable: 0)) == [])
        #expect(p.ops(for: .settle(written: 0)) == [])
        #expect(p.ops(for: .handOver(ready: true)) == [])
        #expect(!p.isOpen)
    }

    /// A failed operation moves nothing: the phase stays where the disk is.
    @Test func aFailedLinkLeavesThePartUnnamed() {
        var p = Self.plan(.unnamed)
        for op in p.ops(for: .journalDue) {
            if op == .linkPart { break }
            p.did(op)
        }
        #expect(p.phase == .unnamed)
    }

    // MARK: random runs against a model of the disk

    /// What is on disk, as the operations leave it.
    struct Disk {
        var open = true
        var partNamed = false
        var journal = false
        var final = false
        /// Bytes accepted but not yet written to the file.
        var dirty = false
        /// Whether the file was flushed since its last change.
        var flushed = false
        var length: Int64 = 0

        mutating func apply(_ op: Op) {
            switch op {
            case .truncate(let n):
                // Cutting to zero is starting over: no journal may describe the old bytes.
                #expect(n > 0 || !journal, "truncate to 0 with a journal")
                if n != length { flushed = false }
                length = n
            case .removeJournal: journal = false
            case .linkPart:
                #expect(open && !partNamed && !final)
                partNamed = true
            case .writeBuffer:
                if dirty { flushed = false }
                dirty = false
            case .syncData: #expect(!dirty)
            case .saveJournal:
                // The journal names a `.part`, and describes bytes already written.
                #expect(partNamed, "a journal without a part")
                journal = true
            case .verifySize, .stampTime, .checksum: break
            case .sync, .syncOnFlusher:
                #expect(!dirty, "flushing with bytes still in the buffer")
                flushed = true
            case .linkFinal:
                #expect(flushed && !partNamed, "the final name before the flush")
                final = true
            case .rename:
                #expect(flushed && partNamed, "the final name before the flush")
                partNamed = false
                final = true
            case .removePart: partNamed = false
            case .close: open = false
            }
        }

        /// The phase the disk is in.
        func agrees(with phase: PartPlan.Phase) -> Bool {
            switch phase {
            case .unopened, .stream: return false
            case .unnamed: return open && !partNamed && !final
            case .named: return open && partNamed && !journal
            case .journaled: return open && partNamed && journal
            // A stop between the rename and the journal's removal leaves a journal
            // without a part, which the next download removes before naming its part.
            case .finished: return final && !partNamed
            case .closed: return !open && !final
            }
        }
    }

    @Test func randomRunsKeepTheJournalAfterItsBytesAndTheNameAfterTheFlush() {
        var rng = SeededRandom(seed: 27)
        for _ in 0..<2_000 {
            var plan = PartPlan(stream: false)
            var disk = Disk()
            let found: PartPlan.Found =
                rng.next() % 2 == 0 ? .nothing : .part(size: 100, resumable: 100, staleJournal: false)
            plan.opened(found)
            if case .part = found {
                (disk.partNamed, disk.journal, disk.length, disk.flushed) = (true, true, 100, true)
            }
            var flushedEarly = false
            for _ in 0..<20 {
                guard plan.isOpen else { break }
                let event: PartPlan.Event
                switch rng.next() % 9 {
                case 0:
                    event = .begin(
                        offset: rng.next() % 2 == 0 ? 0 : disk.length, length: disk.length,
                        validatorsChanged: rng.next() % 2 == 0)
                case 1, 2:
                    // Bytes arrive; a full buffer goes out (with its name first).
                    disk.length += 10
                    disk.dirty = true
                    flushedEarly = false
                    if rng.next() % 2 == 0 {
                        for op in plan.ops(for: .growing) {
                            disk.apply(op)
                            plan.did(op)
                        }
                        disk.apply(.writeBuffer)
                    }
                    continue
                case 3: event = .journalDue
                case 4: event = .checkpoint(length: disk.length, durable: 0)
                case 5: event = .handOver(ready: !disk.dirty)
                case 6, 7: event = .finish(replacing: rng.next() % 2 == 0, flushedEarly: flushedEarly)
                default: event = .settle(written: disk.dirty ? 0 : disk.length)
                }
                if case .journalDue = event, disk.dirty { continue }
                let ops = plan.ops(for: event)
                // Now and then an operation fails, and the rest of the plan is not carried out.
                let failAt = rng.next() % 8 == 0 ? Int(rng.next() % UInt64(max(ops.count, 1))) : ops.count
                for (i, op) in ops.enumerated() {
                    if i == failAt { break }
                    disk.apply(op)
                    plan.did(op)
                    if op == .syncOnFlusher { flushedEarly = true }
                    if case .truncate = op { flushedEarly = false }
                }
                #expect(disk.agrees(with: plan.phase), "\(plan.phase) \(disk) after \(event)")
            }
        }
    }
}
