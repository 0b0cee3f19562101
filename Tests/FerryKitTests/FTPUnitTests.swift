import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// The FTP backend's pure parts: reply parsing, error mapping, path mapping.
struct FTPUnitTests {
    @Test func replyLogPairsRepliesWithCommandsAndHidesThePassword() {
        var log = FTPReplyLog()
        log.consumeIncoming("220 Welcome\r\n")
        log.consumeOutgoing("USER ann\r\n")
        log.consumeIncoming("331 Password please\r\n")
        log.consumeOutgoing("PASS secret\r\n")
        log.consumeIncoming("230 Logged in\r\n")
        log.consumeOutgoing("FEAT\r\n")
        // A multi-line reply, split at odd places.
        log.consumeIncoming("211-Features:\r\n MLST type*;size*;modify*;\r\n SI")
        log.consumeIncoming("ZE\r\n UTF8\r\n211 End\r\n")
        log.consumeOutgoing("DELE /pub/a b.txt\r\n")
        log.consumeIncoming("550 No such file or directory.\r\n")
        #expect(log.replies.map(\.code) == [220, 331, 230, 211, 550])
        #expect(log.replies[2].command == "PASS")
        #expect(!log.replies.contains { $0.command?.contains("secret") == true })
        #expect(log.reply(to: "*DELE /pub/a b.txt")?.text == "No such file or directory.")
        #expect(FTPServerInfo.features(fromFEAT: log.reply(to: "FEAT")) == ["MLST", "SIZE", "UTF8"])
        #expect(log.failure?.code == 550)
    }

    /// A reply's text loses the spaces and tabs around it (as Foundation's
    /// `.whitespaces` trimming did), nothing else; the verb is the command's
    /// first word, uppercased.
    @Test func replyTextIsTrimmedAndTheVerbTaken() {
        #expect(FTPReplyLog.trimmed("  \t12345 \t") == "12345")
        #expect(FTPReplyLog.trimmed("\u{00A0}a b\u{2003}") == "a b")
        #expect(FTPReplyLog.trimmed(" \t ") == "")
        #expect(FTPReplyLog.trimmed("") == "")
        #expect(FTPReplyLog.trimmed("x\r") == "x\r")
        var log = FTPReplyLog()
        log.consumeOutgoing("size /pub/a b\r\n")
        log.consumeIncoming("213   4096  \r\n")
        log.consumeOutgoing("NOOP\r\n")
        log.consumeIncoming("200\r\n")
        #expect(log.lastReply(verb: "SIZE")?.text == "4096")
        #expect(log.lastReply(verb: "SIZE")?.command == "size /pub/a b")
        #expect(log.lastReply(verb: "NOOP")?.text == "")
        #expect(FTPReply(code: 250, text: "", lines: [], command: nil).verb == nil)
    }

    /// RFC 2389 indents feature lines; some servers do not.
    @Test func featuresWithoutTheIndent() {
        var log = FTPReplyLog()
        log.consumeOutgoing("FEAT\r\n")
        log.consumeIncoming("211-Extensions supported:\r\nMDTM\r\nMLST type*;size*;modify*;\r\n SIZE\r\n211 END\r\n")
        #expect(FTPServerInfo.features(fromFEAT: log.reply(to: "FEAT")) == ["MDTM", "MLST", "SIZE"])
        log.consumeOutgoing("FEAT\r\n")
        log.consumeIncoming("211 No extensions\r\n")
        #expect(FTPServerInfo.features(fromFEAT: log.replies.last) == [])
    }

    /// A reply that answers an earlier command marks the connection out of step.
    @Test func aReplyBehindItsCommandIsOutOfStep() {
        var log = FTPReplyLog()
        for (out, reply) in [
            ("MDTM pub/a", "213 20240501120000"), ("SIZE pub/a", "213 1234"), ("EPSV", "502 EPSV refused"),
            ("PASV", "227 Entering Passive Mode (127,0,0,1,4,1)"), ("RETR pub/a", "150 Opening"),
        ] {
            log.consumeOutgoing(out)
            log.consumeIncoming(reply + "\r\n")
        }
        log.consumeIncoming("226 Done\r\n")
        log.consumeOutgoing("SIZE pub/missing")
        log.consumeIncoming("550 No such file\r\n")
        #expect(!log.outOfStep)
        // The SIZE reply arrives only after EPSV was sent.
        log.consumeOutgoing("SIZE pub/b")
        log.consumeOutgoing("EPSV")
        log.consumeIncoming("213 99\r\n")
        #expect(log.outOfStep)
        #expect(!log.refusedAtLogin)
    }

    @Test func a421AtLoginIsARefusalForTooManyConnections() {
        var greeted = FTPReplyLog()
        greeted.consumeIncoming("421 Too many connections from the same IP address.\r\n")
        #expect(greeted.refusedAtLogin)
        var login = FTPReplyLog()
        login.consumeIncoming("220 Hello\r\n")
        login.consumeOutgoing("USER ann\r\n")
        login.consumeIncoming("421 There are too many connected users, please try later.\r\n")
        #expect(login.refusedAtLogin)
        var later = FTPReplyLog()
        later.consumeIncoming("220 Hello\r\n")
        later.consumeOutgoing("RETR a\r\n")
        later.consumeIncoming("421 Timeout.\r\n")
        #expect(!later.refusedAtLogin)
    }

    @Test func failureIgnoresRepliesLibcurlRecoversFrom() {
        var log = FTPReplyLog()
        log.consumeOutgoing("EPSV")
        log.consumeIncoming("500 EPSV not understood\r\n")
        log.consumeOutgoing("PASV")
        log.consumeIncoming("227 Entering Passive Mode (127,0,0,1,4,1)\r\n")
        #expect(log.failure == nil)
        log.consumeOutgoing("RETR x")
        log.consumeIncoming("550 Failed to open file.\r\n")
        log.consumeOutgoing("QUIT")
        log.consumeIncoming("421 Bye\r\n")
        #expect(log.failure?.code == 550)
    }

    @Test func repliesMapToErrorCodes() {
        func map(_ code: Int, _ text: String) -> FerryError {
            .ftp(FTPReply(code: code, text: text, lines: [], command: "X"), operation: "op", target: "ftp://h/x")
        }
        #expect(map(530, "Login incorrect.").code == .authenticationFailed)
        #expect(map(550, "No such file or directory").code == .notFound)
        #expect(map(550, "Permission denied.").code == .permissionDenied)
        #expect(map(550, "Not enough privileges.").code == .permissionDenied)
        #expect(map(550, "Directory not empty.").code == .directoryNotEmpty)
        #expect(map(550, "File exists").code == .destinationExists)
        // The phrases are found whatever the case, at the very end, and next to non-ASCII text.
        #expect(map(550, "PERMISSION DENIED").code == .permissionDenied)
        #expect(map(553, "Écriture refusée: read-only").code == .permissionDenied)
        #expect(map(550, "Datei: ALREADY EXISTS").code == .destinationExists)
        #expect(map(550, "Not empt").code == .notFound)
        #expect(map(530, "Non-anonymous sessions must use encryption.").code == .tls)
        #expect(map(421, "Please reconnect using TLS security mechanisms.").code == .tls)
        #expect(map(550, "SSL/TLS required on the control channel").code == .tls)
        #expect(map(530, "Login incorrect: TLS").code == .authenticationFailed)
        for transient in [421, 425, 426, 450, 451] { #expect(map(transient, "x").isTransient) }
        #expect(!map(550, "x").isTransient)
        let e = map(550, "No such file or directory")
        #expect(e.serverCode == 550 && e.serverText == "No such file or directory")
        #expect(e.description == "op ftp://h/x: 550 No such file or directory")
    }

    @Test func pathsAreRelativeToTheLoginFolder() {
        #expect(FTPEndpoint.serverPath("/pub/a b.txt", entryPath: "/") == "/pub/a b.txt")
        #expect(FTPEndpoint.serverPath("/pub/a", entryPath: "/home/ann") == "/home/ann/pub/a")
        #expect(FTPEndpoint.serverPath("/", entryPath: "/home/ann") == "/home/ann")
        // %2F in a URL decodes to a leading "//": the server's true root.
        #expect(FTPEndpoint.serverPath("//etc/motd", entryPath: "/home/ann") == "/etc/motd")
        #expect(RemotePath.normalize("pub/dir/") == "/pub/dir")
        #expect(RemotePath.parent(of: "/pub/a") == "/pub")
        #expect(RemotePath.parent(of: "/a") == "/")
        #expect(ResumableUpload.temporaryPath(for: "/pub/a b.txt") == "/pub/.a b.txt.ferry-part")
        #expect(ResumableUpload.temporaryPath(for: "/a") == "/.a.ferry-part")
    }

    @Test func lineBreaksInPathsAreRefused() {
        #expect(throws: FerryError.self) {
            try FTPEndpoint.validate("/a\r\nDELE /b", operation: "delete", display: "ftp://h/")
        }
    }

    @Test func theWireURLCarriesNoCredentials() throws {
        let fs = try Ferry.fileSystem(for: RemoteURL(parsing: "ftpes://ann:pw%20x@host:2121/a%23b/"))
        let ftp = try #require(fs as? FTPFileSystem)
        let easy = EasyHandle(tlsSessionCache: ftp.endpoint.tlsSessionCache)
        ftp.endpoint.configure(easy, path: "/a#b/c d")
        #expect(ftp.endpoint.credentials == Credentials(user: "ann", password: "pw x"))
        #expect(ftp.endpoint.display("/x") == "ftpes://ann@host:2121/x")
        #expect(!ftp.endpoint.display("/x").contains("pw"))
    }

    /// Bug 15 (docs/RELIABILITY.md): libcurl 7.88 leaks the TLS session cache of
    /// a handle that ran a transfer and is then given `CURLOPT_SHARE`, so a pooled
    /// handle that served HTTP or plain FTP must never come back for FTPS (nor the
    /// other way). Run one at a time, the handles given back always fit in their
    /// pool, so none is freed and its address reused.
    @Test(arguments: [(TLSSessionCache.own, TLSSessionCache.lane("k")), (.lane("k"), .own)])
    func pooledHandlesKeepTheirTLSSessionCache(first: TLSSessionCache, then: TLSSessionCache) {
        let given = Set((0..<4).map { _ in EasyHandle(tlsSessionCache: first) }.map(\.raw))
        let taken = (0..<4).map { _ in EasyHandle(tlsSessionCache: then) }
        #expect(taken.allSatisfy { !given.contains($0.raw) && $0.tlsSessionCache == then })
    }
}

/// The test servers' process launcher.
struct SpawnedProcessTests {
    @Test func childInheritsOnlyStandardDescriptors() throws {
        let dir = try TempDir(prefix: "spawn")
        // An open descriptor without close-on-exec, as Foundation's Process leaves some.
        let fd = open(dir.file("held"), O_CREAT | O_WRONLY, 0o644)
        defer { close(fd) }
        let p = try SpawnedProcess("/bin/sleep", ["5"], logPath: dir.file("log"))
        defer { p.stop() }
        let fds = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(p.pid)/fd")
        #expect(Set(fds) == ["0", "1", "2"])
        #expect(p.isRunning)
        p.stop()
        #expect(!p.isRunning)
    }
}

extension FTPUnitTests {
    @Test func quotedPathOfAPWDReply() {
        #expect(FTPReplyLog.quotedPath("\"/home/ann\" is the current directory") == "/home/ann")
        #expect(FTPReplyLog.quotedPath("\"/a \"\"quoted\"\" b\" is current") == "/a \"quoted\" b")
        #expect(FTPReplyLog.quotedPath("\"/\"") == "/")
        #expect(FTPReplyLog.quotedPath("no quotes here") == nil)
        #expect(FTPReplyLog.quotedPath("\"/unterminated") == nil)
        #expect(FTPReplyLog.quotedPath("\"\" empty") == nil)
    }
}
