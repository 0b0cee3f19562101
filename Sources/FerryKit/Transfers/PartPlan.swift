/// Where a `PartFile`'s bytes are on disk, and the file operations each event
/// needs: a pure value, events in, operations out, which never touches a file.
///
/// `PartFile` asks `ops(for:)` what an event needs, carries the operations out
/// in order, and reports each one that succeeded (`did(_:)`), which is all that
/// moves the phase: a failed operation leaves the phase where the disk is.
/// The two invariants of docs/DESIGN.md ("Transfers: the contract") are the
/// plans' order, checked by `PartPlanTests`:
///
/// - the journal only after its bytes: a checkpoint writes the buffer, then
///   makes the bytes durable, then saves the journal; the first journal waits
///   until the bytes it describes were written (`journalDue`); starting over
///   removes the old journal before the file is cut and any new byte lands;
/// - the final name only after the flush: `finish` stamps the source's time and
///   flushes (or the flusher thread did, `handOver`) before the one link or
///   rename that gives the final name.
///
/// | phase       | on disk                                   |
/// |-------------|-------------------------------------------|
/// | `unopened`  | nothing yet (`PartFile.open` not run)      |
/// | `unnamed`   | an `O_TMPFILE` with no name: a crash leaves nothing |
/// | `named`     | `NAME.part`, no journal describes it      |
/// | `journaled` | `NAME.part` and `NAME.part.journal`       |
/// | `finished`  | the final name (the journal removed)      |
/// | `closed`    | the `.part` and journal left for a resume, or nothing |
/// | `stream`    | a caller's descriptor: no name, no journal, no flush |
struct PartPlan: Sendable, Hashable {
    enum Phase: Sendable, Hashable {
        case unopened, unnamed, named, journaled, finished, closed, stream
    }

    /// What `PartFile.open` found on disk.
    enum Found: Sendable, Hashable {
        /// No `.part`: the bytes go to an unnamed file.
        case nothing
        /// A `.part` of `size` bytes (maybe an empty one just made, where unnamed
        /// files cannot be), with a journal describing this download whose bytes
        /// up to `resumable` are trusted, or nil; `staleJournal` when a journal
        /// that does not describe them is there.
        case part(size: Int64, resumable: Int64?, staleJournal: Bool)
    }

    enum Event: Sendable, Hashable {
        case opened(Found)
        /// An attempt fixes what the bytes are (`PartFile.begin`): it continues
        /// from `offset` of the `length` accepted so far; `validatorsChanged` when
        /// the journal's record of the source changes.
        case begin(offset: Int64, length: Int64, validatorsChanged: Bool)
        /// The file grows beyond one buffer: a long download shows by its name.
        case growing
        /// Enough bytes were written that the file is worth resuming.
        case journalDue
        /// Make the bytes durable and the journal say so (periodically, and
        /// whenever an attempt ends without finishing); `length` bytes accepted,
        /// `durable` of them known on disk.
        case checkpoint(length: Int64, durable: Int64)
        /// The attempt that completed the file ended (engine thread); `ready`
        /// when nothing is left to check before the flush (the buffer written,
        /// the size as announced).
        case handOver(ready: Bool)
        /// Verify, flush and give the final name; `flushedEarly` when the
        /// flusher thread already stamped and flushed (`handOver`).
        case finish(replacing: Bool, flushedEarly: Bool)
        /// The download failed (after its last checkpoint): `written` bytes are
        /// in the file.
        case settle(written: Int64)
    }

    /// A file operation, carried out by `PartFile` in the order given.
    enum Op: Sendable, Hashable {
        /// Cut the file to this length, the descriptor's offset put there.
        case truncate(Int64)
        /// Remove a journal left by another download or describing old bytes.
        case removeJournal
        /// Give the unnamed file the name `NAME.part` (replacing one that
        /// appeared meanwhile).
        case linkPart
        /// Write the buffer out.
        case writeBuffer
        /// `fdatasync` the bytes; the journal's durable length is now the length.
        case syncData
        /// Write the journal (atomically).
        case saveJournal
        /// The length must be the size the server announced.
        case verifySize
        /// Set the source's time on the open file.
        case stampTime
        /// Make the file durable (`Durability`).
        case sync
        /// Stamp the time and make the file durable on the flusher thread; the
        /// result waits for `finish`.
        case syncOnFlusher
        /// The SHA-256 of the bytes, when asked for.
        case checksum
        /// Link the unnamed file under the final name, never replacing one.
        case linkFinal
        /// Rename `NAME.part` to the final name, replacing one only when asked.
        case rename(replacing: Bool)
        /// Remove the empty `NAME.part`.
        case removePart
        case close
    }

    private(set) var phase: Phase

    /// A plan for a file (`unopened`) or for a caller's descriptor (`stream`).
    init(stream: Bool) { phase = stream ? .stream : .unopened }

    /// Whether the bytes are under `NAME.part` (or a caller's descriptor).
    var isNamed: Bool { phase == .named || phase == .journaled || phase == .stream }

    /// Whether a descriptor is open: from `open` until `close`.
    var isOpen: Bool { phase == .unnamed || phase == .named || phase == .journaled || phase == .stream }

    /// The operations `event` needs now, in order.
    func ops(for event: Event) -> [Op] {
        switch (phase, event) {
        case (.unopened, .opened(.nothing)):
            return []
        case (.unopened, .opened(.part(let size, let resumable, let stale))):
            // Cutting also puts the descriptor's offset at the end, where bytes go on.
            if let resumable { return [.truncate(resumable)] }
            // Nothing to resume: a stale journal must not describe the new bytes.
            return (stale ? [.removeJournal] : []) + (size > 0 ? [.truncate(0)] : [])

        case (.stream, .begin):
            // Bytes written to a pipe cannot be taken back (`PartFile.begin` refuses
            // another offset before asking).
            return [.writeBuffer]
        case (.unnamed, .begin(let offset, let length, _)), (.named, .begin(let offset, let length, _)):
            return [.writeBuffer] + (offset != length ? [.truncate(offset)] : [])
        case (.journaled, .begin(let offset, let length, let changed)):
            // Starting over: the old validators must never describe new bytes.
            if offset == 0 { return [.writeBuffer, .removeJournal] + (length != 0 ? [.truncate(0)] : []) }
            return [.writeBuffer] + (offset != length ? [.truncate(offset)] : []) + (changed ? [.saveJournal] : [])

        case (.unnamed, .growing):
            return naming
        case (.named, .growing), (.journaled, .growing), (.stream, .growing):
            return []

        case (.unnamed, .journalDue), (.named, .journalDue):
            return naming + [.saveJournal]
        case (.journaled, .journalDue), (.stream, .journalDue):
            return []

        case (.stream, .checkpoint):
            return [.writeBuffer]
        case (.unnamed, .checkpoint(let length, let durable)), (.named, .checkpoint(let length, let durable)),
            (.journaled, .checkpoint(let length, let durable)):
            guard length > 0 else { return [] }
            return naming + [.writeBuffer] + (length > durable ? [.syncData] : []) + [.saveJournal]

        case (.unnamed, .handOver(let ready)), (.named, .handOver(let ready)), (.journaled, .handOver(let ready)):
            return ready ? [.syncOnFlusher] : []
        case (.stream, .handOver):
            return []

        case (.stream, .finish):
            return [.writeBuffer, .verifySize, .close]
        case (.unnamed, .finish(let replacing, let early)), (.named, .finish(let replacing, let early)),
            (.journaled, .finish(let replacing, let early)):
            let durable: [Op] = early ? [.checksum] : [.writeBuffer, .verifySize, .stampTime, .sync, .checksum]
            if phase == .unnamed && !replacing {
                // One link, which fails rather than replace what appeared meanwhile.
                return durable + [.linkFinal, .close]
            }
            return durable + naming + [.close, .rename(replacing: replacing)]
                + (phase == .journaled ? [.removeJournal] : [])

        case (.stream, .settle):
            return [.writeBuffer, .close]
        case (.unnamed, .settle):
            // An unnamed file vanishes with its descriptor.
            return [.close]
        case (.named, .settle(let written)):
            return [.close] + (written == 0 ? [.removePart] : [])
        case (.journaled, .settle(let written)):
            // An empty file is just clutter, and so is its journal.
            return [.close] + (written == 0 ? [.removePart, .removeJournal] : [])

        default:
            // Nothing left to do: a closed or finished part, or one not opened.
            return []
        }
    }

    /// The unnamed file's `.part` name, when it has none yet; a journal left by
    /// an earlier download must not describe these bytes.
    private var naming: [Op] { phase == .unnamed ? [.removeJournal, .linkPart] : [] }

    /// `op` succeeded: the phase follows what is on disk.
    mutating func did(_ op: Op) {
        switch op {
        case .linkPart:
            if phase == .unnamed { phase = .named }
        case .saveJournal:
            if phase == .named { phase = .journaled }
        case .removeJournal:
            if phase == .journaled { phase = .named }
        case .linkFinal, .rename:
            phase = .finished
        case .removePart:
            if phase != .finished { phase = .closed }
        case .close:
            if phase != .finished { phase = .closed }
        case .truncate, .writeBuffer, .syncData, .verifySize, .stampTime, .sync, .syncOnFlusher, .checksum:
            break
        }
    }

    /// `PartFile.open` found `found`: the phase it opened in.
    mutating func opened(_ found: Found) {
        guard phase == .unopened else { return }
        switch found {
        case .nothing: phase = .unnamed
        case .part(_, let resumable, _): phase = resumable != nil ? .journaled : .named
        }
    }
}
