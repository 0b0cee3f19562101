import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// SFTP over OpenSSH's `ssh` (issue 32 item 3): the version 3 packets Ferry
/// writes and reads, and the `ssh` command it runs for a login method.
struct SFTPOverOpenSSHTests {
    @Test func aReadRequestIsLengthTypeIdHandleOffsetLength() {
        var r = SFTPWire.Request(.read, id: 7)
        r.string([0xAA, 0xBB])
        r.u64(0x1_0000_0002)
        r.u32(261_120)
        #expect(
            r.packet == [
                0, 0, 0, 23, 5, 0, 0, 0, 7, 0, 0, 0, 2, 0xAA, 0xBB, 0, 0, 0, 1, 0, 0, 0, 2, 0, 3, 0xFC, 0,
            ])
    }

    @Test func repliesAreReadInPlaceAndBrokenOnesRefused() throws {
        // data: type 103, id 9, string "hello"
        let data: [UInt8] = [103, 0, 0, 0, 9, 0, 0, 0, 5] + Array("hello".utf8)
        try data.withUnsafeBytes { raw in
            guard case .data(let id, let bytes) = try SFTPWire.Reply(raw) else {
                Issue.record("not data")
                return
            }
            #expect(id == 9)
            #expect(Array(bytes) == Array("hello".utf8))
        }
        // attrs: size 42, permissions 0o100644, times 1 and 1700000000
        var a = SFTPWire.Request(.attrs, id: 3)
        a.attributes(.init(size: 42, permissions: 0o100644, accessTime: 1, modificationTime: 1_700_000_000))
        let attrs = Array(a.packet.dropFirst(4))
        try attrs.withUnsafeBytes { raw in
            guard case .attrs(3, let got) = try SFTPWire.Reply(raw) else {
                Issue.record("not attrs")
                return
            }
            #expect(got.size == 42 && got.kind == .file && got.modificationTime == 1_700_000_000)
        }
        // A status without its message (some servers) and one cut short.
        let status: [UInt8] = [101, 0, 0, 0, 4, 0, 0, 0, 1]
        try status.withUnsafeBytes { raw in
            guard case .status(4, SFTPWire.Status.eof, "") = try SFTPWire.Reply(raw) else {
                Issue.record("not EOF")
                return
            }
        }
        let cut: [UInt8] = [103, 0, 0, 0, 9, 0, 0, 0, 50, 1, 2]
        #expect(throws: SFTPWire.Malformed.self) { try cut.withUnsafeBytes { _ = try SFTPWire.Reply($0) } }
        let names: [UInt8] = [104, 0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF]
        #expect(throws: SFTPWire.Malformed.self) { try names.withUnsafeBytes { _ = try SFTPWire.Reply($0) } }
    }

    @Test func sshIsRunStrictWithTheKeyLibssh2UsedAndNeverForAPassword() throws {
        let work = try TempDir(prefix: "openssh-args")
        let key = work.file("id_ed25519")
        try "-----BEGIN OPENSSH PRIVATE KEY-----\n-----END OPENSSH PRIVATE KEY-----\n".write(
            toFile: key, atomically: true, encoding: .utf8)
        let made = try #require(
            SFTPOpenSSH.make(
                transport: .automatic, method: .key(key), user: "ann", alias: "nas", port: 2222,
                configFile: "/tmp/cfg", knownHosts: ["/h/known hosts", "/h/other"], connectTimeout: .seconds(15),
                sshPath: "/usr/bin/ssh"))
        let args = made.arguments.joined(separator: " ")
        #expect(args.hasPrefix("/usr/bin/ssh -F /tmp/cfg -o BatchMode=yes"))
        #expect(args.contains("-o IdentitiesOnly=yes -i \(key)"))
        #expect(args.contains("-o StrictHostKeyChecking=yes -o UserKnownHostsFile=\"/h/known hosts\" /h/other"))
        #expect(args.hasSuffix("-p 2222 -l ann -s -- nas sftp"))
        let insecure = try #require(
            SFTPOpenSSH.make(
                transport: .openSSH, method: .agent, user: "ann", alias: "nas", port: nil, configFile: nil,
                knownHosts: [], connectTimeout: .seconds(15), sshPath: "/usr/bin/ssh"))
        #expect(insecure.arguments.contains("UserKnownHostsFile=/dev/null"))
        #expect(!insecure.arguments.contains("-i"))
        #expect(
            SFTPOpenSSH.make(
                transport: .automatic, method: .password, user: "ann", alias: "nas", port: nil, configFile: nil,
                knownHosts: [], connectTimeout: .seconds(15), sshPath: "/usr/bin/ssh") == nil)
        #expect(
            SFTPOpenSSH.make(
                transport: .libssh2, method: .agent, user: "ann", alias: "nas", port: nil, configFile: nil,
                knownHosts: [], connectTimeout: .seconds(15), sshPath: "/usr/bin/ssh") == nil)
        #expect(
            SFTPOpenSSH.make(
                transport: .automatic, method: .agent, user: "ann", alias: "nas", port: nil, configFile: nil,
                knownHosts: [], connectTimeout: .seconds(15), sshPath: nil) == nil)
    }

    @Test func sshsWordsBecomeErrorsPeopleCanActOn() {
        let key = SFTPOpenSSH.error(sshSaid: "Host key verification failed.", operation: "download", target: "t")
        #expect(key.code == .hostKeyRejected)
        let login = SFTPOpenSSH.error(
            sshSaid: "ann@nas: Permission denied (publickey).", operation: "download", target: "t")
        #expect(login.code == .authenticationFailed)
        let gone = SFTPOpenSSH.error(sshSaid: nil, operation: "download", target: "t")
        #expect(gone.code == .connectionFailed && gone.isTransient)
        let status = SFTPOpenSSH.error(status: 2, message: "No such file", operation: "download", target: "t")
        #expect(status.code == .notFound && status.serverCode == 2 && status.serverText == "No such file")
        #expect(SFTPOpenSSH.wirePath("/~/notes.txt") == Array("notes.txt".utf8))
        #expect(SFTPOpenSSH.wirePath("/etc/motd") == Array("/etc/motd".utf8))
    }
}

/// Downloads over each transport (OpenSSH's `ssh`, the default; libssh2) against
/// the real sshd of the backend's tests.
extension SFTPOpenSSHTests {
    @Test(arguments: [SSHTransport.automatic, .libssh2])
    func filesComeWholeWithTheirTimeAndRefusalsInTheServersWords(transport: SSHTransport) async throws {
        let fs = try fs(transport: transport)
        let pool = fs.endpoint.openSSHPool(for: .key(server.keys.clientKey))
        #expect((pool != nil) == (transport != .libssh2))
        // Larger than the reads in flight, one read exactly, one byte, empty.
        let sizes = [9_000_123, 261_120, 1, 0]
        for (i, size) in sizes.enumerated() {
            let name = "f\(i).bin"
            let bytes = try TestData.file(server.local(name), size: size, seed: UInt64(i + 1))
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: 1_614_834_367)], ofItemAtPath: server.local(name))
            let dest = work.file(name)
            let r = try await fs.download(server.root + "/" + name, to: dest, options: .init()).result
            #expect(FileManager.default.contents(atPath: dest) == Data(bytes), "\(name)")
            #expect(r.sourceModified == Date(timeIntervalSince1970: 1_614_834_367))
        }
        // Over OpenSSH the files went through its pool, which made a lane.
        if let pool { #expect(pool.lanes >= 1) }
        do {
            _ = try await fs.download(server.root + "/missing.bin", to: work.file("m.bin"), options: .init()).result
            Issue.record("a missing file was downloaded")
        } catch {
            #expect(error.code == .notFound && error.serverCode == 2, "\(error)")
        }
        try FileManager.default.createDirectory(atPath: server.local("dir"), withIntermediateDirectories: true)
        await #expect(throws: FerryError.self) {
            _ = try await fs.download(server.root + "/dir", to: work.file("d.bin"), options: .init()).result
        }
        #expect(!FileManager.default.fileExists(atPath: work.file("m.bin")))
    }
}
