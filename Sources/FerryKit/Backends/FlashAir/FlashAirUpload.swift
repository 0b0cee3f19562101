import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One upload to a card, the way the card maker documents it and every working
/// tool does it: `WRITEPROTECT=ON`, `UPDIR=folder`, `FTIME=0xDDDDTTTT` from the
/// local file's modification time, then the multipart `POST`, then a listing to
/// check the file is there with the right size (UPDIR and POST say SUCCESS even
/// when nothing was stored).
///
/// Cards cannot append, so a paused or failed upload starts the file over.
struct FlashAirUpload: Sendable {
    let card: FlashAirFileSystem
    /// The local file.
    let source: String
    /// The remote file path.
    let path: String
    let options: UploadOptions

    /// Uploads, retrying silence and 503 with back-off, and returns the result.
    func run(_ transfer: Transfer) async throws(FerryError) -> TransferResult {
        let started = ContinuousClock.now
        let shown = card.shown(path)
        let local = try localFile()
        let (folder, name) = RemotePath.split(path)
        try FlashAirUpload.checkName(name, target: shown)

        // Where it goes, and what is there already.
        var entries: [RemoteEntry]
        if let found = try await folderEntries(folder) {
            entries = found
        } else if options.createParents {
            do {
                try await card.makeDirectory(folder, createParents: true)
            } catch {
                throw error.context(operation: "upload", target: card.shown(folder))
            }
            entries = []
        } else {
            throw FerryError(
                .notFound, operation: "upload", target: card.shown(folder),
                detail: "the folder does not exist; create it first (mkdir -p)")
        }
        let before = FlashAirFileSystem.find(name, in: entries)
        if let skipped = try OverwriteDecision.check(
            OverwriteDecision.found(before), policy: options.overwrite, operation: "upload", source: source,
            destination: shown, started: started, folder: OverwriteDecision.remoteFolder(shown))
        {
            return skipped
        }
        // Store under the name the card already uses when only the case differs.
        let storedName = before?.name ?? name
        let ftime = FATDateTime(date: local.modified, timeZone: .current).ftime

        // A card holds no part of a failed POST: every failure is one in a row.
        var budget = RetryBudget(maxRetries: options.maxRetries, firstDelay: options.retryDelay)
        var sent: Int64 = 0
        transfer.report(bytesDone: 0, totalBytes: local.size, force: true)
        while true {
            try await transfer.waitWhilePaused()
            let attempt: FerryError?
            do throws(FerryError) {
                // UPDIR and FTIME are the card's, not ours: hold the card until the POST used them.
                let bytes = try await FlashAirWriteLock.withLock(card.url.hostKey) { () async throws(FerryError) in
                    try await card.writeProtect(operation: "upload", target: path)
                    try await card.setUploadDirectory(folder, operation: "upload")
                    try await card.upload(query: "FTIME=" + ftime, operation: "upload", target: path)
                    return try await post(storedName, size: local.size, transfer: transfer)
                }
                guard let bytes else { continue }  // paused: wait, then start the file over
                sent += bytes
                attempt = nil
            } catch {
                attempt = error
            }
            guard let error = attempt else { break }
            if error.code == .cancelled || transfer.isCancelled {
                if before == nil { await removeLeftover(folder: folder, name: storedName, size: local.size) }
                throw FerryError(.cancelled, operation: "upload", target: shown)
            }
            guard error.isTransient else {
                if before == nil { await removeLeftover(folder: folder, name: storedName, size: local.size) }
                throw error
            }
            switch budget.failure(progressed: false) {
            case .again(let delay):
                try await transfer.backOff(for: delay)
            case .exhaustedInRow(let tries), .exhaustedInAll(let tries):
                if before == nil { await removeLeftover(folder: folder, name: storedName, size: local.size) }
                var last = error
                last.detail = nil
                throw FlashAirCGI.notAnswering(after: tries, last: last, operation: "upload", target: shown)
            case .tooManyRestarts:
                preconditionFailure("an upload to a card does not restart")
            }
        }

        // UPDIR and the POST answer SUCCESS even when nothing was stored: look.
        let after = try await card.listing(folder, operation: "upload")
        guard let stored = FlashAirFileSystem.find(storedName, in: after) else {
            throw FerryError(
                .verificationFailed, operation: "upload", target: shown,
                detail: "the card said SUCCESS but the file is not in \(folder)")
        }
        guard stored.size == local.size else {
            throw FerryError(
                .verificationFailed, operation: "upload", target: shown,
                detail: "the card holds \(stored.size.map(String.init) ?? "?") bytes, the file has \(local.size)")
        }
        return TransferResult(
            source: source, destination: shown, size: local.size, bytesTransferred: sent, retries: budget.retries,
            duration: .now - started)
    }

    /// One POST. Returns the bytes sent, or nil when it was paused.
    private func post(_ name: String, size: Int64, transfer: Transfer) async throws(FerryError) -> Int64? {
        let shown = card.shown(path)
        let job = FlashAirPostJob(
            card: card.url, file: source, name: name, size: size, stallTimeout: options.stallTimeout,
            connectTimeout: card.policy.connectTimeout, transfer: transfer)
        let engine = card.engine
        transfer.setInterrupter { engine.interrupt(job) }
        let c = await engine.perform(job)
        transfer.setInterrupter(nil)
        if c.interrupted {
            if transfer.isCancelled { throw FerryError(.cancelled, operation: "upload", target: shown) }
            return nil
        }
        guard c.code == .ok else {
            if c.code == .readError {
                throw FerryError(
                    .localIO, operation: "upload", target: source, serverText: c.errorText,
                    detail: "could not read the file")
            }
            throw FerryError.curl(c, operation: "upload", target: shown)
        }
        let status = job.headers.status != 0 ? job.headers.status : c.responseCode
        if status == 404 || status == 501 {
            throw FerryError(
                .unsupportedOperation, operation: "upload", target: shown, serverCode: status,
                serverText: job.headers.reason,
                detail: "upload.cgi is disabled on this card (set UPLOAD=1 in SD_WLAN/CONFIG)")
        }
        if status >= 400 {
            // Only 502/503/504 mean "try again" on a card; a 500 or a 507 (no room)
            // would fail the same way on every retry.
            var error = FerryError.http(status: status, reason: job.headers.reason, operation: "upload", target: shown)
            error.isTransient = FlashAirCGI.isRetryable(status: status)
            if status == 507 {
                error.detail = "the card is full: no space left on it; free some space there, or use another card"
            }
            throw error
        }
        if job.text.uppercased().contains("ERROR") {
            throw FerryError(.serverError, operation: "upload", target: shown, serverText: String(job.text.prefix(120)))
        }
        return size
    }

    /// The folder's entries, or nil when it does not exist. A real card lists a
    /// missing folder as empty, so an empty listing is checked against the parent.
    private func folderEntries(_ folder: String) async throws(FerryError) -> [RemoteEntry]? {
        let entries = try await card.listing(folder, operation: "upload")
        if !entries.isEmpty || folder == "/" { return entries }
        let (parent, name) = RemotePath.split(folder)
        guard let parentEntries = try await folderEntries(parent),
            let me = FlashAirFileSystem.find(name, in: parentEntries)
        else { return nil }
        guard me.isDirectory else {
            throw FerryError(
                .destinationExists, operation: "upload", target: card.shown(folder), detail: "is a file, not a folder")
        }
        return entries
    }

    /// Deletes what a failed upload left under a name that was free before.
    private func removeLeftover(folder: String, name: String, size: Int64) async {
        guard let entries = try? await card.listing(folder, operation: "upload"),
            let left = FlashAirFileSystem.find(name, in: entries), !left.isDirectory, left.size != size
        else { return }
        try? await card.del(left.path, operation: "upload")
    }

    /// Size and modification time of the local file.
    private func localFile() throws(FerryError) -> (size: Int64, modified: Date) {
        var st = stat()
        guard stat(source, &st) == 0 else { throw FerryError.posix(errno, operation: "upload", path: source) }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw FerryError(.localIO, operation: "upload", target: source, detail: "not a regular file")
        }
        guard access(source, R_OK) == 0 else { throw FerryError.posix(errno, operation: "upload", path: source) }
        let modified = OS.modificationDate(st)
        return (Int64(st.st_size), modified)
    }

    /// Refuses names the multipart header or the card cannot carry.
    static func checkName(_ name: String, target: String) throws(FerryError) {
        let bad = name.unicodeScalars.first { $0.value < 0x20 || "\"\\/:*?<>|".unicodeScalars.contains($0) }
        if name.isEmpty || name == "." || name == ".." || bad != nil {
            throw FerryError(
                .invalidURL, operation: "upload", target: target,
                detail: "a FAT file name cannot contain control characters or any of \" \\ / : * ? < > |")
        }
    }
}
