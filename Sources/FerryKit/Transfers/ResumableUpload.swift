import Foundation

/// The few steps of an upload that depend on the protocol, for the driver
/// ``ResumableUpload`` that owns the rest. A libcurl protocol conforms through
/// ``ResumableUploadTarget`` (FTP's `FTPUploadTarget`, SFTP's
/// `SFTPUploadTarget`), which sends with libcurl jobs; a protocol whose library
/// runs on its own thread (SMB's `SMBUploadTarget`) sends itself (`send`).
///
/// Paths are the upload's own, normalized (`RemotePath.normalize`). Every
/// step that talks to the server throws `FerryError`; a transient one (a dropped
/// connection) is retried by the driver from the upload's one budget.
protocol UploadTarget: Sendable {
    /// A path as messages show it (the server's URL, no password).
    func display(_ path: String) -> String

    /// What the server holds under `path`; throws `notFound` when nothing.
    func entry(_ path: String) async throws(FerryError) -> RemoteEntry

    /// Whether the protocol can append to a remote file (FTP's `APPE`, SFTP's
    /// append, WebDAV's ranged PUT where the server takes it); without it an
    /// upload is never resumed from a leftover and every try sends the whole
    /// file. Default: true.
    var appends: Bool { get }

    /// Whether this upload goes straight under its final name, with no
    /// temporary file (a server known to refuse renames). Default: false.
    func writesInPlace(_ path: String) async throws(FerryError) -> Bool

    /// The bytes of `path` in `range` (to compare a leftover temporary's tail
    /// with the local file), nil when they cannot be read.
    func read(_ path: String, range: ClosedRange<Int64>) async -> [UInt8]?

    /// Sends the local file (`upload`) from `start` to `remote`, going on after
    /// a pause or a transient failure from what the server kept, every failure
    /// drawn from `budget` (`UploadSteps.send` for libcurl targets).
    func send(to remote: String, from start: Int64, _ upload: UploadSource, budget: inout UploadBudget)
        async throws(FerryError)

    /// Renames the finished temporary file to `path`; `replacing` when the
    /// destination held a file the overwrite policy allowed to replace.
    func rename(_ temporary: String, to path: String, replacing: Bool) async throws(FerryError)

    /// Deletes a temporary file, best effort (a cancel that discards partial data).
    func remove(_ temporary: String) async

    /// The server refused the rename for good (`error`): true to store the file
    /// under its final name instead (after removing `temporary`). Default: false.
    func renameRefused(_ error: FerryError, temporary: String) async -> Bool
}

/// The local side of an upload as `UploadTarget.send` gets it.
struct UploadSource: Sendable {
    /// The local file's path, for messages.
    let source: String
    /// The open local file.
    let fd: Int32
    /// Its size.
    let size: Int64
    let options: UploadOptions
    let transfer: Transfer
    /// The upload's destination as shown (a cancel is reported for it).
    let destination: String
}

/// An ``UploadTarget`` that sends with libcurl jobs (FTP, SFTP).
protocol ResumableUploadTarget: UploadTarget {
    /// One transfer of the local file's bytes, from an offset to the end.
    associatedtype Job: LocalFileUploadJob

    /// The engine the transfer jobs run on.
    var engine: CurlEngine { get }

    /// One transfer job: the local file `source` (open as `fd`, `size` bytes)
    /// from `offset` on, to `path`, appended to what the server holds there when
    /// `offset > 0`, with the upload's `options` (create parents, stall timeout).
    func uploadJob(
        to path: String, from offset: Int64, source: String, fd: Int32, size: Int64, options: UploadOptions,
        transfer: Transfer
    ) -> Job

    /// The error for a transfer `job` libcurl ended with an error; `target` names the file.
    func failure(_ completion: CurlCompletion, of job: Job, target: String) -> FerryError

    /// Throws the server's refusal of the job just finished to `path` (WebDAV's
    /// PUT answered 409 or 403: libcurl says "done" all the same); nothing by
    /// default. Asked before what the server holds is looked up, so a refusal is
    /// never mistaken for "nothing arrived yet" and tried again. Returns the
    /// size the server holds when it looked it up (WebDAV's pieces), nil when
    /// the driver should ask.
    func checkAnswer(_ path: String) async throws(FerryError) -> Int64?
}

extension ResumableUploadTarget {
    /// Sends with one libcurl job after another (`UploadSteps.send`).
    func send(to remote: String, from start: Int64, _ upload: UploadSource, budget: inout UploadBudget)
        async throws(FerryError)
    {
        let shown = display(remote)
        try await UploadSteps.send(
            size: upload.size, from: start, remote: shown, destination: upload.destination, engine: engine,
            transfer: upload.transfer, budget: &budget,
            makeJob: { from in
                uploadJob(
                    to: remote, from: from, source: upload.source, fd: upload.fd, size: upload.size,
                    options: upload.options, transfer: upload.transfer)
            },
            failure: { completion, job in failure(completion, of: job, target: shown) },
            continuation: { () async throws(FerryError) in
                // Where to go on: the server's size when it can be continued,
                // else 0 (a transfer from the start replaces it).
                guard upload.options.resume, appends, let have = try await UploadSteps.remoteLength(remote, of: self),
                    have <= upload.size
                else { return 0 }
                return have
            },
            storedLength: { () async throws(FerryError) in
                if let held = try await checkAnswer(remote) { return held }
                return try await UploadSteps.remoteLength(remote, of: self)
            })
    }
}

extension UploadSteps {
    /// Bytes the server holds of `remote` (0 when it does not exist), nil when it cannot tell.
    static func remoteLength(_ remote: String, of target: some UploadTarget) async throws(FerryError) -> Int64? {
        guard let entry = try await existing({ () async throws(FerryError) in try await target.entry(remote) })
        else { return 0 }
        return entry.size
    }
}

extension ResumableUploadTarget {
    func checkAnswer(_ path: String) async throws(FerryError) -> Int64? { nil }
}

extension UploadTarget {
    var appends: Bool { true }
    func writesInPlace(_ path: String) async throws(FerryError) -> Bool { false }
    func renameRefused(_ error: FerryError, temporary: String) async -> Bool { false }
}

/// The one upload algorithm of every backend that writes a temporary file and
/// renames it (docs/DESIGN.md, "Transfers: the contract"); a ``ResumableUploadTarget``
/// supplies the protocol's steps:
///
/// 1. The overwrite policy decides first (`OverwriteDecision`, on the entry
///    at the destination).
/// 2. The bytes go to `.NAME.ferry-part` beside the destination, so the final
///    name never shows a half-written file, then a rename puts it in place. A
///    target whose server refuses the rename stores under the final name.
/// 3. An interrupted upload (pause, dropped connection, an earlier run) goes
///    on by appending from the size the server holds, after checking that its
///    last bytes (`UploadSteps.tailCheckLength`) are the local file's; a target
///    that cannot append (`appends` false: a WebDAV server without ranged
///    PUTs) sends the whole file again.
/// 4. Every step (the checks before and after a transfer, the transfers, the
///    rename) draws on one `UploadBudget`: `maxRetries` failures in a row give
///    up, and only bytes the server confirms holding start a new row. A rename
///    whose reply was lost may have happened: the temporary name is then gone
///    and the destination holds the file's size.
enum ResumableUpload {
    /// The temporary name an upload to `path` is written under.
    static func temporaryPath(for path: String) -> String {
        let parent = RemotePath.parent(of: path)
        let name = "." + RemotePath.name(of: path) + ".ferry-part"
        return RemotePath.join(parent, name)
    }

    /// An error about the temporary file `shownTemporary` as one about the user's
    /// file `display`, the temporary's name kept as a note ("upload
    /// dav://h/a.jpg: 507 Insufficient Storage (writing the temporary
    /// .a.jpg.ferry-part)"); an error about anything else (the local file) as it is.
    static func naming(_ display: String, in error: FerryError, about shownTemporary: String) -> FerryError {
        guard error.target == shownTemporary, shownTemporary != display else { return error }
        var named = error
        named.target = display
        let note = "writing the temporary " + RemotePath.name(of: shownTemporary)
        named.detail = error.detail.map { $0 + "; " + note } ?? note
        return named
    }

    /// Starts an upload as a `Transfer` (a backend's `upload(_:to:options:)`):
    /// `~` in `source` expanded, `path` normalized and checked by `validate`
    /// (a path the protocol cannot carry fails the transfer at once), then `run`.
    ///
    /// - Parameters:
    ///   - source: The local file.
    ///   - path: The remote file.
    ///   - options: The upload's options.
    ///   - display: The remote path as messages show it.
    ///   - validate: Throws for a path the protocol cannot carry (the normalized
    ///     path, "upload", the path as shown): the endpoint's `validate`.
    ///   - makeTarget: The protocol's steps for the normalized path, made once the local file is open.
    static func start<Target: UploadTarget>(
        _ source: String, to path: String, options: UploadOptions, display: (String) -> String,
        validate: (_ path: String, _ operation: String, _ shown: String) throws(FerryError) -> Void,
        target makeTarget: @escaping @Sendable (_ path: String) async throws(FerryError) -> Target
    ) -> Transfer {
        let source = LocalPath.expandingTilde(source)
        let p = RemotePath.normalize(path)
        let shown = display(p)
        do {
            try validate(p, "upload", shown)
        } catch {
            return Transfer.failed(error, source: source, destination: shown)
        }
        return Transfer.start(source: source, destination: shown) { transfer async throws(FerryError) in
            try await run(source, to: p, options: options, transfer: transfer) { () async throws(FerryError) in
                try await makeTarget(p)
            }
        }
    }

    /// Uploads the local file `source` to `path`; `target` is made once the
    /// local file is open (SFTP finds its login method then).
    static func run<Target: UploadTarget>(
        _ source: String, to path: String, options: UploadOptions, transfer: Transfer,
        target makeTarget: () async throws(FerryError) -> Target
    ) async throws(FerryError) -> TransferResult {
        let started = ContinuousClock.now
        let (fd, size) = try UploadSteps.open(source, transfer: transfer)
        defer { OS.close(fd) }
        let upload = Upload(
            target: try await makeTarget(), source: source, path: path, options: options, transfer: transfer, fd: fd,
            size: size)
        return try await upload.run(started: started)
    }

    private struct Upload<Target: UploadTarget>: Sendable {
        let target: Target
        let source: String
        let path: String
        let options: UploadOptions
        let transfer: Transfer
        let fd: Int32
        let size: Int64

        private var display: String { target.display(path) }

        func run(started: ContinuousClock.Instant) async throws(FerryError) -> TransferResult {
            var budget = UploadBudget(maxRetries: options.maxRetries, retryDelay: options.retryDelay)
            let existing = try await budget.retrying(transfer) { () async throws(FerryError) in
                try await entry(path)
            }
            if let skipped = try OverwriteDecision.check(
                OverwriteDecision.found(existing), policy: options.overwrite, operation: "upload", source: source,
                destination: display, started: started, folder: OverwriteDecision.remoteFolder(display))
            {
                return skipped
            }
            let inPlace = try await budget.retrying(transfer) { () async throws(FerryError) in
                try await target.writesInPlace(path)
            }
            var resumedFrom: Int64 = 0
            if inPlace {
                try await send(to: path, from: 0, budget: &budget)
            } else {
                let temporary = ResumableUpload.temporaryPath(for: path)
                if options.resume && target.appends {
                    resumedFrom = try await budget.retrying(transfer) { () async throws(FerryError) in
                        try await resumableLength(of: temporary)
                    }
                }
                if resumedFrom > 0 {
                    transfer.report(bytesDone: resumedFrom, totalBytes: size, resumedFrom: resumedFrom, force: true)
                }
                do {
                    try await send(to: temporary, from: resumedFrom, budget: &budget)
                } catch  where error.code == .cancelled && transfer.discardsPartialData {
                    await target.remove(temporary)
                    throw error
                }
                do {
                    try await rename(temporary, replacing: existing != nil, budget: &budget)
                } catch  where error.serverCode != nil && !error.isTransient {
                    guard await target.renameRefused(error, temporary: temporary) else { throw error }
                    resumedFrom = 0
                    try await send(to: path, from: 0, budget: &budget)
                }
            }
            return UploadSteps.result(
                source: source, destination: display, size: size, resumedFrom: resumedFrom, budget: budget,
                started: started)
        }

        /// The entry under `p`, nil when there is none.
        private func entry(_ p: String) async throws(FerryError) -> RemoteEntry? {
            try await UploadSteps.existing { () async throws(FerryError) in try await target.entry(p) }
        }

        /// Bytes the server holds of `remote` (0 when it does not exist), nil when it cannot tell.
        private func remoteLength(_ remote: String) async throws(FerryError) -> Int64? {
            try await UploadSteps.remoteLength(remote, of: target)
        }

        /// How much of a temporary file left by an earlier upload can be kept: its
        /// size, when no more than the local file's and its last bytes match.
        private func resumableLength(of temporary: String) async throws(FerryError) -> Int64 {
            guard let have = try await remoteLength(temporary), have > 0, have <= size else { return 0 }
            guard let tail = await target.read(temporary, range: UploadSteps.tail(of: have)) else { return 0 }
            return UploadSteps.tailMatches(tail, fd: fd, have: have) ? have : 0
        }

        /// Renames the finished temporary file to the destination, retrying a
        /// dropped connection. A rename whose reply was lost may have happened
        /// already: then the temporary name is gone and the destination holds
        /// the file's size.
        private func rename(_ temporary: String, replacing: Bool, budget: inout UploadBudget)
            async throws(FerryError)
        {
            var tried = false
            try await budget.retrying(transfer) { () async throws(FerryError) in
                if tried, try await entry(temporary) == nil {
                    if try await entry(path)?.size == size { return }
                    throw FerryError(
                        .protocolError, operation: "upload", target: display,
                        detail: "the temporary file \(RemotePath.name(of: temporary)) vanished before the rename; "
                            + "upload again")
                }
                tried = true
                do throws(FerryError) {
                    try await target.rename(temporary, to: path, replacing: replacing)
                } catch {
                    throw ResumableUpload.naming(display, in: error, about: target.display(temporary))
                }
            }
        }

        /// Sends the local file from `start` to `remote` (the target's `send`).
        private func send(to remote: String, from start: Int64, budget: inout UploadBudget)
            async throws(FerryError)
        {
            let upload = UploadSource(
                source: source, fd: fd, size: size, options: options, transfer: transfer, destination: display)
            do throws(FerryError) {
                try await target.send(to: remote, from: start, upload, budget: &budget)
            } catch {
                throw ResumableUpload.naming(display, in: error, about: target.display(remote))
            }
        }
    }
}
