import CSMBClient
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An SMB share (`smb://[DOMAIN;]USER@HOST[:PORT]/SHARE/PATH`) as a remote file
/// system, through Samba's libsmbclient: SMB2 and SMB3, with signing and
/// encryption as the server requires (`?encrypt=required` insists on encryption).
/// `smb://HOST/` lists the server's shares.
///
/// libsmbclient blocks and a context serves one thread: every call runs on a
/// context's own thread (`SMBServer`: a small pool of contexts per server, so
/// several files move at once), and the rest of Ferry stays asynchronous.
/// Downloads go through the shared driver (`.part` + journal, resume from the
/// part's length when the file's size and time are unchanged, bounded retries);
/// uploads go to `.NAME.ferry-part` beside the destination, then are renamed,
/// and get the local file's time. Errors name the NT status libsmbclient's
/// `errno` stands for ("NT_STATUS_LOGON_FAILURE", "NT_STATUS_BAD_NETWORK_NAME")
/// and what to do.
public struct SMBFileSystem: RemoteFileSystem, DownloadSourceFactory {
    /// The URL this file system was opened with.
    public let url: RemoteURL
    let server: SMBServer

    /// Opens an `smb://` URL.
    ///
    /// - Parameters:
    ///   - url: The server; the path's first part is the share.
    ///   - options: Credentials (else from the URL, or as `resolveCredentials`
    ///     finds them); `DOMAIN;user` names a domain or workgroup; no user logs
    ///     in as a guest. `maxConnections` is the number of contexts and of
    ///     transfers at once (default: the per-server limit of
    ///     ``Ferry/setConnectionLimits(total:perHost:widenFarServers:)``, 4 until set).
    public init(url: RemoteURL, options: ConnectionOptions = .init()) {
        self.url = url
        let credentials = options.credentials(for: url)
        var user = credentials?.user ?? ""
        var workgroup = ""
        if let semicolon = user.firstIndex(of: ";") {
            workgroup = String(user[..<semicolon])
            user = String(user[user.index(after: semicolon)...])
        } else if let backslash = user.firstIndex(of: "\\") {
            workgroup = String(user[..<backslash])
            user = String(user[user.index(after: backslash)...])
        }
        let encrypt = url.query.map(CameraFileSystem.queryItems)?["encrypt"] == "required"
        server = SMBServer.shared(
            .init(
                host: url.host, port: url.port ?? 445, workgroup: workgroup, user: user,
                password: credentials?.password ?? "", encrypt: encrypt),
            size: options.maxConnections)
    }

    /// Ranges are read at an offset: in-memory reads and thumbnails from the first bytes.
    public var capabilities: RemoteCapabilities { [.rangeReads] }

    /// The redacted URL of a path.
    func shown(_ path: String) -> String { url.with(path: path).redacted }

    /// Runs `body` on a context of this server.
    func run<T: Sendable>(
        alone: Bool = false,
        _ body: @escaping @Sendable (_ smb: SMBContext, _ c: SMBHandle) throws(FerryError) -> T,
        operation: String, path: String
    ) async throws(FerryError) -> T {
        let target = shown(path)
        return try await server.run(alone: alone) { smb throws(FerryError) in
            try body(smb, try smb.context(operation: operation, target: target))
        }
    }

    // MARK: list and stat

    /// Lists a folder with each entry's size and time; at the server's root, its shares.
    public func list(_ path: String) async throws(FerryError) -> [RemoteEntry] {
        let folder = SMBPath.normalize(path)
        let target = shown(folder)
        // The server's shares come through an RPC pipe (srvsvc), which Ferry's
        // tests have not run on two threads at once: that listing runs alone.
        return try await run(
            alone: folder == "/",
            { smb, c throws(FerryError) in
                guard let dir = ferry_smb_opendir(c, smb.wire(folder)) else {
                    throw smb.error(errno, operation: "list", target: target, path: folder)
                }
                defer { ferry_smb_closedir(c, dir) }
                var entries: [RemoteEntry] = []
                if folder == "/" {
                    while let e = ferry_smb_readdir(c, dir) {
                        guard e.pointee.smbc_type == UInt32(SMBC_FILE_SHARE) else { continue }
                        // `name` is a C flexible array: read it where it lies, never through a copy.
                        let name = String(
                            cString: (UnsafeRawPointer(e) + MemoryLayout<smbc_dirent>.offset(of: \.name)!)
                                .assumingMemoryBound(to: CChar.self))
                        // Administrative shares (C$, ADMIN$) are hidden, as Windows hides them.
                        entries.append(
                            RemoteEntry(name: name, path: "/" + name, kind: .directory, isHidden: name.hasSuffix("$")))
                    }
                    guard errno == 0 else { throw smb.error(errno, operation: "list", target: target, path: folder) }
                    return entries
                }
                var st = OS.FileStatus()
                while let info = ferry_smb_readdirplus2(c, dir, &st) {
                    guard let cname = info.pointee.name else { continue }
                    let name = String(cString: cname)
                    if name == "." || name == ".." { continue }
                    let isDir = (st.st_mode & S_IFMT) == S_IFDIR
                    let attrs = info.pointee.attrs
                    entries.append(
                        RemoteEntry(
                            name: name, path: RemotePath.join(folder, name),
                            kind: isDir ? .directory : .file, size: isDir ? nil : Int64(st.st_size),
                            modified: SMBFileSystem.timestamp(st),
                            isHidden: attrs & 0x2 != 0 || name.hasPrefix("."), isReadOnly: attrs & 0x1 != 0))
                }
                guard errno == 0 else { throw smb.error(errno, operation: "list", target: target, path: folder) }
                return entries
            }, operation: "list", path: folder)
    }

    /// A `stat`'s modification time to the second, nil when the server gave none.
    static func timestamp(_ st: OS.FileStatus) -> RemoteTimestamp? {
        let t = OS.modificationTime(st)
        return t.seconds > 0 ? RemoteTimestamp(utc: Date(timeIntervalSince1970: TimeInterval(t.seconds))) : nil
    }

    /// Describes a file, folder or share.
    public func stat(_ path: String) async throws(FerryError) -> RemoteEntry {
        let p = SMBPath.normalize(path)
        if p == "/" { return RemoteEntry(name: "/", path: "/", kind: .directory) }
        let target = shown(p)
        let st = try await run(
            { smb, c throws(FerryError) in try SMBFileSystem.stat(smb, c, p, operation: "stat", target: target) },
            operation: "stat", path: p)
        return SMBFileSystem.entry(p, st)
    }

    static func entry(_ p: String, _ st: OS.FileStatus) -> RemoteEntry {
        let isDir = (st.st_mode & S_IFMT) == S_IFDIR
        return RemoteEntry(
            name: RemotePath.name(of: p), path: p, kind: isDir ? .directory : .file,
            size: isDir ? nil : Int64(st.st_size), modified: timestamp(st))
    }

    /// `stat` on the context's thread. A share is a folder (its root opens).
    static func stat(_ smb: SMBContext, _ c: SMBHandle, _ p: String, operation: String, target: String)
        throws(FerryError) -> OS.FileStatus
    {
        var st = OS.FileStatus()
        if !p.dropFirst().contains("/") {
            guard let d = ferry_smb_opendir(c, smb.wire(p)) else {
                throw smb.error(errno, operation: operation, target: target, path: p)
            }
            ferry_smb_closedir(c, d)
            st.st_mode = S_IFDIR | 0o755
            return st
        }
        guard ferry_smb_stat(c, smb.wire(p), &st) == 0 else {
            throw smb.error(errno, operation: operation, target: target, path: p)
        }
        return st
    }

    /// `stat` on the context's thread, nil when nothing has that name.
    static func existing(_ smb: SMBContext, _ c: SMBHandle, _ p: String, operation: String, target: String)
        throws(FerryError) -> OS.FileStatus?
    {
        do {
            return try stat(smb, c, p, operation: operation, target: target)
        } catch  where error.code == .notFound && error.serverText != "NT_STATUS_BAD_NETWORK_NAME" {
            return nil
        }
    }

    // MARK: download

    /// Starts downloading `path` through the shared download driver, resuming a
    /// `.part` from its length when the file's size and time are unchanged.
    public func download(_ path: String, to destination: String, options: DownloadOptions) -> Transfer {
        let destination = LocalDestination.prepare(destination, options)
        return DownloadDriver.start(downloadSource(for: path), to: destination, options: options)
    }

    /// Starts downloading a listed file: a small one's first attempt takes its
    /// size and time from the listing instead of asking the server after the
    /// open (one request a file fewer; `SMBListedFacts`).
    public func download(_ entry: RemoteEntry, to destination: String, options: DownloadOptions) -> Transfer {
        let destination = LocalDestination.prepare(destination, options)
        let source = SMBDownloadAttempt.source(
            fs: self, path: SMBPath.normalize(entry.path), listed: SMBListedFacts(entry).map(ListedFacts.init))
        return DownloadDriver.start(source, to: destination, options: options)
    }

    func downloadSource(for path: String) -> DownloadSource {
        SMBDownloadAttempt.source(fs: self, path: SMBPath.normalize(path), listed: nil)
    }

    // MARK: upload

    /// Starts uploading a local file through the shared upload driver: to
    /// `.NAME.ferry-part` beside `path`, then renamed into place, with the local
    /// file's modification time; an interrupted upload goes on from what the
    /// server holds after its last bytes were compared.
    public func upload(_ source: String, to path: String, options: UploadOptions) -> Transfer {
        let fs = self
        return ResumableUpload.start(
            source, to: path, options: options, display: { fs.shown($0) },
            validate: { _, _, _ throws(FerryError) in },
            target: { _ async throws(FerryError) in SMBUploadTarget(fs: fs) })
    }

    // MARK: changes

    /// Deletes a file.
    public func delete(_ path: String) async throws(FerryError) {
        try await call("delete", path) { ferry_smb_unlink($0, $1) }
    }

    /// Runs one libsmbclient call on the normalized `path` (its `smb://` URL)
    /// that answers 0 when it did it; another answer is its `errno` in words.
    private func call(
        _ operation: String, _ path: String, _ call: @escaping @Sendable (SMBHandle, String) -> Int32
    ) async throws(FerryError) {
        let p = SMBPath.normalize(path)
        let target = shown(p)
        try await run(
            { smb, c throws(FerryError) in
                guard call(c, smb.wire(p)) == 0 else {
                    throw smb.error(errno, operation: operation, target: target, path: p)
                }
            }, operation: operation, path: p)
    }

    /// Creates a folder; with `createParents`, the missing folders above it too,
    /// and an existing folder is then not an error.
    public func makeDirectory(_ path: String, createParents: Bool) async throws(FerryError) {
        let p = SMBPath.normalize(path)
        let target = shown(p)
        try await run(
            { smb, c throws(FerryError) in
                try SMBFileSystem.makeDirectory(smb, c, p, createParents: createParents, target: target)
            }, operation: "mkdir", path: p)
    }

    static func makeDirectory(
        _ smb: SMBContext, _ c: SMBHandle, _ p: String, createParents: Bool, target: String
    ) throws(FerryError) {
        let parts = p.split(separator: "/").map(String.init)
        guard parts.count >= 2 else {
            throw FerryError(
                .unsupportedOperation, operation: "mkdir", target: target,
                detail: "shares are made on the server, not over SMB")
        }
        var prefixes: [String] = []
        var current = "/" + parts[0]
        for part in parts.dropFirst() {
            current += "/" + part
            prefixes.append(current)
        }
        for (i, dir) in prefixes.enumerated() where createParents || i == prefixes.count - 1 {
            if ferry_smb_mkdir(c, smb.wire(dir), 0o755) == 0 { continue }
            let code = errno
            if code == EEXIST, let st = try existing(smb, c, dir, operation: "mkdir", target: target) {
                if (st.st_mode & S_IFMT) != S_IFDIR {
                    throw FerryError(
                        .destinationExists, operation: "mkdir", target: target,
                        detail: "a file has the name \(dir)")
                }
                if createParents { continue }
            }
            throw smb.error(code, operation: "mkdir", target: target, path: dir)
        }
    }

    /// Removes an empty folder; one that holds something fails with `directoryNotEmpty`.
    public func removeDirectory(_ path: String) async throws(FerryError) {
        try await call("rmdir", path) { ferry_smb_rmdir($0, $1) }
    }

    /// Renames or moves a file or folder within its share. A `newPath` without a
    /// `/` is a new name in the same folder. An existing destination is replaced
    /// only with `replacing` (libsmbclient itself would replace it: it is looked up first).
    public func rename(_ path: String, to newPath: String, replacing: Bool) async throws(FerryError) {
        let from = SMBPath.normalize(path)
        let to = RemotePath.renameTarget(newPath, from: from)
        let target = shown(from)
        try await run(
            { smb, c throws(FerryError) in
                try SMBFileSystem.rename(smb, c, from, to, replacing: replacing, operation: "rename", target: target)
            }, operation: "rename", path: from)
    }

    static func rename(
        _ smb: SMBContext, _ c: SMBHandle, _ from: String, _ to: String, replacing: Bool, operation: String,
        target: String
    ) throws(FerryError) {
        guard SMBPath.share(of: from) == SMBPath.share(of: to) else {
            throw FerryError(
                .unsupportedOperation, operation: operation, target: target,
                detail: "SMB renames within one share; copy the file to the other share instead")
        }
        if !replacing, try existing(smb, c, to, operation: operation, target: target) != nil {
            throw FerryError(
                .destinationExists, operation: operation, target: smb.key.host.isEmpty ? to : target,
                detail: "\(RemotePath.name(of: to)) exists", recovery: .replace)
        }
        guard ferry_smb_rename(c, smb.wire(from), smb.wire(to)) == 0 else {
            throw smb.error(errno, operation: operation, target: target, path: from)
        }
    }

    // MARK: bytes in memory

    /// Reads one byte range: only those bytes travel. A range past the end gives
    /// what the file has there (nothing, past its end).
    public func data(at path: String, range: Range<Int64>) async throws(FerryError) -> Data {
        let p = SMBPath.normalize(path)
        let target = shown(p)
        guard range.lowerBound >= 0 else { throw FerryError.badRange(range, operation: "read", target: target) }
        if range.isEmpty { return Data() }
        let length = Int(min(range.upperBound - range.lowerBound, Int64(Int32.max)))
        return try await run(
            { smb, c throws(FerryError) in
                guard let f = ferry_smb_open(c, smb.wire(p), O_RDONLY, 0) else {
                    throw smb.error(errno, operation: "read", target: target, path: p)
                }
                defer { ferry_smb_close(c, f) }
                guard ferry_smb_lseek(c, f, off_t(range.lowerBound), SEEK_SET) >= 0 else {
                    throw smb.error(errno, operation: "read", target: target, path: p)
                }
                var out = Data(count: length)
                var got = 0
                while got < length {
                    let n = out.withUnsafeMutableBytes {
                        ferry_smb_read(c, f, $0.baseAddress! + got, min(length - got, SMBDownloadAttempt.chunk))
                    }
                    if n < 0 { throw smb.error(errno, operation: "read", target: target, path: p) }
                    if n == 0 { break }
                    got += n
                }
                out.count = got
                return out
            }, operation: "read", path: p)
    }
}
