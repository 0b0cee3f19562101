import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What an asyncssh test server does wrong on purpose.
public struct AsyncSSHFaults: Sendable {
    /// Drop the SSH connection on the first read at or past this offset (once per server).
    public var closeAtOffset: Int64?
    /// Pause this long before answering each read.
    public var readDelayMilliseconds: Int = 0
    /// Files and folders whose name contains this are "Permission denied".
    public var denyNamesContaining: String?
    /// Writes fail as a full disk would.
    public var diskFull = false
    /// Every write drops the SSH connection instead of being answered.
    public var dropWrites = false

    public init(
        closeAtOffset: Int64? = nil, readDelayMilliseconds: Int = 0, denyNamesContaining: String? = nil,
        diskFull: Bool = false, dropWrites: Bool = false
    ) {
        self.closeAtOffset = closeAtOffset
        self.readDelayMilliseconds = readDelayMilliseconds
        self.denyNamesContaining = denyNamesContaining
        self.diskFull = diskFull
        self.dropWrites = dropWrites
    }
}

/// An SFTP server written with asyncssh (PyPI, in the test venv) on 127.0.0.1
/// with a free port: password login (`user`/`password`), the SFTP root chrooted
/// to a temporary folder, every read logged (`reads`), and `AsyncSSHFaults`.
public final class AsyncSSHTestServer: Sendable {
    public let port: Int
    /// The local folder the SFTP root `/` maps to.
    public let root: String
    public let keys: SSHTestKeys
    public let user: String
    public static let password = "s3cret ssh pass"
    private let dir: TempDir
    private let rootDir: TempDir
    private let process: SpawnedProcess

    public init(faults: AsyncSSHFaults = .init()) async throws {
        try TestVenv.require(module: "asyncssh", package: "asyncssh")
        let dir = try TempDir(prefix: "asyncssh")
        let rootDir = try TempDir(prefix: "asyncssh-root")
        let root = rootDir.path
        let keys = try SSHTestKeys.make(in: dir.path)
        let hostKey = keys.hostKey
        let user = "ferry"
        let script = dir.file("sftpserver.py")
        try Self.script.write(toFile: script, atomically: true, encoding: .utf8)
        self.dir = dir
        self.rootDir = rootDir
        self.root = root
        self.keys = keys
        self.user = user
        (port, process) = try await SpawnedProcess.listening("asyncssh") { port in
            var args = [
                script, "--port", String(port), "--root", root, "--user", user, "--password", Self.password,
                "--host-key", hostKey, "--reads", dir.file("reads.log"), "--writes", dir.file("writes.log"),
                "--delay-ms", String(faults.readDelayMilliseconds),
            ]
            if let offset = faults.closeAtOffset { args += ["--close-at", String(offset)] }
            if let deny = faults.denyNamesContaining { args += ["--deny", deny] }
            if faults.diskFull { args.append("--disk-full") }
            if faults.dropWrites { args.append("--drop-writes") }
            return try SpawnedProcess(TestVenv.program("python"), args, logPath: dir.file("server-\(port).log"))
        }
    }

    deinit { process.stop(grace: 0.05) }

    public func stop() { process.stop(grace: 0.05) }

    public var log: String { process.log }

    /// Every read the server answered, in order: (path, offset, length, SFTP
    /// session number: 1 for the first session the server started, and so on).
    public var reads: [(path: String, offset: Int64, length: Int, session: Int)] { requests("reads.log") }

    /// Every write the server was asked for, in order: (path, offset, length,
    /// SFTP session number), answered or not.
    public var writes: [(path: String, offset: Int64, length: Int, session: Int)] { requests("writes.log") }

    /// The lines of a request log the script writes: path, offset, length, session.
    private func requests(_ file: String) -> [(path: String, offset: Int64, length: Int, session: Int)] {
        let text = (try? String(contentsOfFile: dir.file(file), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let f = line.split(separator: "\t")
            guard f.count == 4, let o = Int64(f[1]), let n = Int(f[2]), let c = Int(f[3]) else { return nil }
            return (String(f[0]), o, n, c)
        }
    }

    /// The server's line for a `known_hosts` file.
    public func knownHostsLine() throws -> String {
        let parts = try SSHTestKeys.publicKey(of: keys.hostKey).split(separator: " ")
        return "[127.0.0.1]:\(port) \(parts[0]) \(parts[1])"
    }

    /// An `sftp://` URL of an SFTP path (percent-encoded here), with the password when asked.
    public func url(_ path: String, password: String? = nil) -> String {
        let encoded = path.addingPercentEncoding(
            withAllowedCharacters: .urlPathAllowed.subtracting(.init(charactersIn: "?#;")))!
        let auth = password.map { ":" + $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! } ?? ""
        return "sftp://\(user)\(auth)@127.0.0.1:\(port)\(encoded.hasPrefix("/") ? "" : "/")\(encoded)"
    }

    /// Writes a file at an SFTP path.
    public func write(_ data: Data, at path: String) throws {
        let p = root + (path.hasPrefix("/") ? path : "/" + path)
        try FileManager.default.createDirectory(
            atPath: testParentFolder(p), withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: p))
    }

    /// The local path of an SFTP path.
    public func local(_ path: String) -> String { root + (path.hasPrefix("/") ? path : "/" + path) }

    static let script = #"""
        import argparse, asyncio, os, sys, time
        import asyncssh

        p = argparse.ArgumentParser()
        p.add_argument("--port", type=int)
        p.add_argument("--root")
        p.add_argument("--user")
        p.add_argument("--password")
        p.add_argument("--host-key")
        p.add_argument("--reads")
        p.add_argument("--delay-ms", type=int, default=0)
        p.add_argument("--close-at", type=int)
        p.add_argument("--deny")
        p.add_argument("--disk-full", action="store_true")
        p.add_argument("--writes")
        p.add_argument("--drop-writes", action="store_true")
        args = p.parse_args()
        reads = open(args.reads, "a", buffering=1)
        writes = open(args.writes, "a", buffering=1)
        closed = [False]
        connections = [0]

        class Server(asyncssh.SSHServer):
            def begin_auth(self, username):
                return True
            def password_auth_supported(self):
                return True
            def validate_password(self, username, password):
                return username == args.user and password == args.password

        class FS(asyncssh.SFTPServer):
            def __init__(self, chan):
                super().__init__(chan, chroot=args.root.encode())
                self.paths = {}
                connections[0] += 1
                self.session_no = connections[0]

            def deny(self, path):
                if args.deny and args.deny.encode() in path:
                    raise asyncssh.SFTPPermissionDenied("Permission denied")

            def open(self, path, pflags, attrs):
                self.deny(path)
                f = super().open(path, pflags, attrs)
                self.paths[id(f)] = path.decode("utf-8", "replace")
                return f

            def scandir(self, path):
                self.deny(path)
                return super().scandir(path)

            def mkdir(self, path, attrs):
                self.deny(path)
                return super().mkdir(path, attrs)

            def remove(self, path):
                self.deny(path)
                return super().remove(path)

            async def read(self, file_obj, offset, size):
                reads.write("%s\t%d\t%d\t%d\n" % (self.paths.get(id(file_obj), "?"), offset, size, self.session_no))
                if args.delay_ms:
                    await asyncio.sleep(args.delay_ms / 1000)
                if args.close_at is not None and offset >= args.close_at and not closed[0]:
                    closed[0] = True
                    self.channel.get_connection().abort()
                    await asyncio.sleep(1)
                file_obj.seek(offset)
                return file_obj.read(size)

            async def write(self, file_obj, offset, data):
                writes.write("%s\t%d\t%d\t%d\n" % (self.paths.get(id(file_obj), "?"), offset, len(data), self.session_no))
                if args.drop_writes:
                    self.channel.get_connection().abort()
                    await asyncio.sleep(1)
                    raise asyncssh.SFTPConnectionLost("dropped")
                if args.disk_full:
                    raise asyncssh.SFTPFailure("No space left on device")
                return super().write(file_obj, offset, data)

        async def main():
            await asyncssh.create_server(
                Server, "127.0.0.1", args.port, server_host_keys=[args.host_key],
                sftp_factory=FS, allow_scp=False)
            print("listening", args.port, flush=True)
            await asyncio.Event().wait()

        asyncio.run(main())
        """#
}
