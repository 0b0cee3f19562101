import Foundation

/// One attempt of an SFTP download over OpenSSH (`SFTPChannel`), on its lane's
/// thread: `open` and `stat` sent together (one round trip), then reads of the
/// server's largest size kept in flight up to `window` bytes, each written into
/// the part in order; `close` is sent and not waited for.
///
/// The validators are the size and the modification time in seconds, as with
/// libssh2 (`SFTPDownloadAttempt`), so a part begun by either transport resumes
/// by the other; the same `SizeAndTimeDownloadDecision` decides.
final class SFTPOpenSSHDownload: @unchecked Sendable {
    /// Bytes of reads in flight: OpenSSH's channel window is 2 MiB; twice that
    /// keeps it full while replies are written.
    static let window = 4 << 20

    private let path: String
    private let display: String
    private let stop: StopFlag
    private var state: ChunkedAttempt

    static func attempt(
        pool: SFTPChannelPool, path: String, display: String, offset: Int64, part: PartFile, transfer: Transfer,
        options: DownloadOptions
    ) async -> AttemptReport {
        let stop = StopFlag()
        transfer.setInterrupter { stop.set() }
        defer { transfer.setInterrupter(nil) }
        let attempt = SFTPOpenSSHDownload(
            path: path, display: display, stop: stop,
            state: ChunkedAttempt(
                decision: SizeAndTimeDownloadDecision(offset: offset, journal: part.journal, display: display),
                part: part, transfer: transfer, offset: offset))
        return await pool.holding { lane in
            do throws(FerryError) {
                try await lane.run(
                    target: display, connectTimeout: options.connectTimeout + .seconds(15),
                    replyTimeout: options.stallTimeout ?? .seconds(30)
                ) { channel throws(FerryError) in attempt.run(channel) }
            } catch {
                attempt.state.end(.failed(error))
            }
            return attempt.state.report!
        }
    }

    private init(path: String, display: String, stop: StopFlag, state: ChunkedAttempt) {
        self.path = path
        self.display = display
        self.stop = stop
        self.state = state
    }

    private func failed(_ e: FerryError) { state.end(.failed(e)) }

    private func statusError(_ code: UInt32, _ message: String) -> FerryError {
        SFTPOpenSSH.error(status: code, message: message, operation: "download", target: display)
    }

    /// The whole attempt, on the lane's thread.
    func run(_ channel: SFTPChannel) {
        do throws(FerryError) {
            try read(channel)
        } catch {
            failed(error)
        }
        if state.report == nil { state.end(.interrupted) }
    }

    private func read(_ ch: SFTPChannel) throws(FerryError) {
        if stop.isSet { return state.end(.interrupted) }
        let wire = SFTPOpenSSH.wirePath(path)
        let openID = ch.id()
        var open = SFTPWire.Request(.open, id: openID)
        open.string(wire)
        open.u32(SFTPWire.OpenFlags.read)
        open.attributes(.init())
        let statID = ch.id()
        var stat = SFTPWire.Request(.stat, id: statID)
        stat.string(wire)
        try ch.send(open, operation: "download", target: display)
        try ch.send(stat, operation: "download", target: display)
        var handle: [UInt8]?
        var attributes: SFTPWire.Attributes?
        var refusal: FerryError?
        for _ in 0..<2 {
            try ch.receive(operation: "download", target: display) { reply throws(FerryError) in
                switch reply {
                case .handle(let id, let h) where id == openID: handle = h
                case .attrs(let id, let a) where id == statID: attributes = a
                case .status(let id, let code, let message) where id == openID || id == statID:
                    if refusal == nil || id == openID { refusal = statusError(code, message) }
                default:
                    throw FerryError(
                        .protocolError, operation: "download", target: display,
                        detail: "the server's SFTP answered an open with something else")
                }
            }
        }
        // The open's refusal, else the stat's, else the bare status for a reply that named neither.
        var refused: FerryError { refusal ?? statusError(SFTPWire.Status.failure, "") }
        guard let handle else { return failed(refused) }
        defer {
            // Not waited for: its reply is dropped when it comes.
            let closeID = ch.id()
            var close = SFTPWire.Request(.close, id: closeID)
            close.string(handle)
            if (try? ch.send(close, operation: "download", target: display)) != nil { ch.forget(closeID) }
        }
        guard let attributes else { return failed(refused) }
        if attributes.kind == .directory {
            return failed(
                FerryError(.localIO, operation: "download", target: display, detail: "is a folder; name a file"))
        }
        let size = attributes.size.map { Int64(clamping: $0) }
        let facts = SizeAndTimeDownloadDecision.Facts(
            size: size, modified: attributes.modificationTime.map { .stamp(seconds: Int64($0), nanoseconds: 0) })
        guard let from = state.head(facts) else { return }
        try stream(ch, handle: handle, from: from, size: size)
    }

    /// Reads from `from` to `size` (to the end when unknown), `window` bytes in flight.
    private func stream(_ ch: SFTPChannel, handle: [UInt8], from: Int64, size: Int64?) throws(FerryError) {
        let readSize = Int64(ch.readSize)
        let inFlight = max(2, SFTPOpenSSHDownload.window / ch.readSize)
        // Requests in the order of their offsets.
        var pending: [(id: UInt32, offset: Int64, length: Int64)] = []
        pending.reserveCapacity(inFlight)
        var head = 0
        var next = from
        var ended = false
        // Replies that came before the one the part needs (servers may answer out of order).
        var early: [UInt32: Result<[UInt8], SFTPWire.StatusReply>] = [:]
        while true {
            if stop.isSet {
                ch.forget(pending[head...].map(\.id))
                return state.end(.interrupted)
            }
            while !ended && pending.count - head < inFlight && (size.map { next < $0 } ?? true) {
                let length = size.map { min(readSize, $0 - next) } ?? readSize
                let id = ch.id()
                var r = SFTPWire.Request(.read, id: id)
                r.string(handle)
                r.u64(UInt64(next))
                r.u32(UInt32(length))
                try ch.send(r, operation: "download", target: display)
                pending.append((id, next, length))
                next += length
            }
            if head == pending.count { break }
            if head > 64 {
                pending.removeFirst(head)
                head = 0
            }
            let want = pending[head]
            // What the reply to `want` says: bytes written, the end, or a refusal.
            var got: Int64 = -1
            var status: SFTPWire.StatusReply?
            if let stored = early.removeValue(forKey: want.id) {
                switch stored {
                case .success(let bytes):
                    guard bytes.withUnsafeBytes({ state.write($0) }) else {
                        return ch.forget(pending[(head + 1)...].map(\.id))
                    }
                    got = Int64(bytes.count)
                case .failure(let s): status = s
                }
            } else {
                var wrote = true
                try ch.receive(operation: "download", target: display) { reply throws(FerryError) in
                    switch reply {
                    case .data(let id, let bytes) where id == want.id:
                        wrote = state.write(bytes)
                        got = Int64(bytes.count)
                    case .status(let id, let code, let message) where id == want.id:
                        status = .init(code: code, message: message)
                    case .data(let id, let bytes) where pending[head...].contains(where: { $0.id == id }):
                        early[id] = .success(Array(bytes))
                    case .status(let id, let code, let message) where pending[head...].contains(where: { $0.id == id }):
                        early[id] = .failure(.init(code: code, message: message))
                    default:
                        throw FerryError(
                            .protocolError, operation: "download", target: display,
                            detail: "the server's SFTP answered a read with something else")
                    }
                }
                if !wrote { return ch.forget(pending[(head + 1)...].map(\.id)) }
                if got < 0 && status == nil { continue }
            }
            head += 1
            if let status {
                ch.forget(pending[head...].map(\.id))
                if status.code == SFTPWire.Status.eof { break }
                return failed(statusError(status.code, status.message))
            }
            if got < want.length {
                // A short read: the rest is asked again; the reads already sent
                // for later offsets are dropped.
                ch.forget(pending[head...].map(\.id))
                early.removeAll()
                pending.removeAll()
                head = 0
                next = want.offset + got
                if got == 0 { ended = true }
            }
        }
        state.end(.ok(length: state.part.length))
    }
}
