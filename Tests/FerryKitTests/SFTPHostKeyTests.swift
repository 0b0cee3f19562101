import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// Host keys Ferry records as OpenSSH would (hashed when ssh_config says so), and
/// connections that never cross from one host key policy to another.
@Suite(.serialized)
struct SFTPHostKeyTests {
    let server: OpenSSHTestServer
    let work: TempDir

    init() async throws {
        server = try await OpenSSHTestServer()
        work = try TempDir(prefix: "sftp-hostkeys")
    }

    func fs(_ policy: HostKeyPolicy) throws -> SFTPFileSystem {
        var options = ConnectionOptions()
        options.identityFile = server.keys.clientKey
        options.hostKeys = policy
        return SFTPFileSystem(url: try RemoteURL(parsing: server.url()), options: options)
    }

    /// OpenSSH's own client against the test sshd, checking the host key strictly
    /// against `file` and reading no configuration (`-F /dev/null`).
    func sshAccepts(_ file: String) throws -> TestProcess.Output {
        let ssh = try #require(TestProcess.which("ssh"), "ssh (openssh-client) is missing")
        return try TestProcess.run(
            ssh,
            [
                "-F", "/dev/null", "-o", "UserKnownHostsFile=\(file)", "-o", "GlobalKnownHostsFile=/dev/null",
                "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
                "-i", server.keys.clientKey, "-p", String(server.port), "\(server.user)@127.0.0.1", "true",
            ])
    }

    @Test func anAcceptedKeyIsRecordedHashedThatSshKeygenFindsAndSshAccepts() async throws {
        let file = work.file("hashed/known_hosts")
        var policy = HostKeyPolicy.knownHosts(file, acceptNew: true)
        policy.hashRecordedHosts = true
        // Several requests at once (as -j 4 makes them): one entry.
        let systems = try (0..<4).map { _ in try fs(policy) }
        let root = server.root
        try await withThrowingTaskGroup(of: Void.self) { group in
            for fs in systems {
                group.addTask { _ = try await fs.list(root) }
            }
            try await group.waitForAll()
        }
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 1, "\(text)")
        #expect(text.hasPrefix("|1|") && !text.contains("127.0.0.1"), "\(text)")
        let hostKey = try SSHTestKeys.publicKey(of: server.keys.hostKey).split(separator: " ")
        #expect(lines.first?.hasSuffix(" \(hostKey[0]) \(hostKey[1])") == true, "\(text)")
        let keygen = try #require(TestProcess.which("ssh-keygen"))
        let found = try TestProcess.run(keygen, ["-F", "[127.0.0.1]:\(server.port)", "-f", file])
        #expect(found.status == 0 && found.stdout.contains("found: line 1"), "\(found.stdout) \(found.stderr)")
        let ssh = try sshAccepts(file)
        #expect(ssh.status == 0, "ssh refused the recorded entry: \(ssh.stderr)")
        // The entry is Ferry's own known host from now on, in strict mode too.
        #expect(try await fs(.knownHosts(file)).list(server.root).isEmpty)
    }

    @Test func theDefaultFollowsTheInstalledSshConfig() async throws {
        // Debian's /etc/ssh/ssh_config says `HashKnownHosts yes` under `Host *`.
        let wanted = SSHClientConfig.hashKnownHosts(host: "127.0.0.1", files: [SSHClientConfig.systemFile])
        let installed = (try? String(contentsOfFile: SSHClientConfig.systemFile, encoding: .utf8)) ?? ""
        #expect(wanted == installed.contains("\n    HashKnownHosts yes"), "\(installed)")
        let file = work.file("default/known_hosts")
        _ = try await fs(.knownHosts(file, acceptNew: true)).list(server.root)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.hasPrefix("|1|") == wanted, "\(text)")
        let ssh = try sshAccepts(file)
        #expect(ssh.status == 0, "ssh refused the recorded entry: \(ssh.stderr)")
    }

    @Test func aConnectionOpenedWithoutACheckNeverServesARequestWithOne() async throws {
        // An --insecure request leaves its logged-in connection idle for reuse.
        #expect(try await fs(.insecure).list(server.root).isEmpty)
        let empty = work.file("empty_hosts")
        try "".write(toFile: empty, atomically: true, encoding: .utf8)
        do {
            _ = try await fs(.knownHosts(empty)).list(server.root)
            Issue.record("a strict request rode on the unchecked connection")
        } catch let e as FerryError {
            #expect(e.code == .hostKeyRejected, "\(e)")
        }
        // Nor does a connection checked against one file serve a request checked
        // against another that does not know the host.
        let known = work.file("known_hosts")
        try (server.knownHostsLine() + "\n").write(toFile: known, atomically: true, encoding: .utf8)
        #expect(try await fs(.knownHosts(known)).list(server.root).isEmpty)
        do {
            _ = try await fs(.knownHosts(empty)).list(server.root)
            Issue.record("a request checked against another file rode on a connection checked against known_hosts")
        } catch let e as FerryError {
            #expect(e.code == .hostKeyRejected, "\(e)")
        }
        // The same policy still reuses its connection: one more login, not one per request.
        let before = server.log.components(separatedBy: "Accepted publickey").count
        for _ in 0..<3 { _ = try await fs(.knownHosts(known)).list(server.root) }
        #expect(server.log.components(separatedBy: "Accepted publickey").count == before, "\(server.log)")
    }
}

/// Hashed known_hosts names and ssh_config reading, without a server.
struct SSHHostKeyUnitTests {
    func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }

    @Test func sha1AndHMACAgainstTheirStandardVectors() {
        #expect(hex(Digest.hash(Array("abc".utf8), .sha1)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(Digest.hash([], .sha1)) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(hex(Digest.hash(long, .sha1)) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        // RFC 2202, test cases 1, 2 and 6 (a key longer than a block).
        #expect(
            hex(Digest.hmacSHA1(key: Array(repeating: 0x0b, count: 20), Array("Hi There".utf8)))
                == "b617318655057264e28bc0b6fb378c8ef146be00")
        #expect(
            hex(Digest.hmacSHA1(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8)))
                == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        #expect(
            hex(
                Digest.hmacSHA1(
                    key: Array(repeating: 0xaa, count: 80),
                    Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
                == "aa4ae5e15272d00e95705637ce8a3b55ed402112")
    }

    @Test func hashedNamesAreOpenSSHsAndMatchOnlyTheirHost() throws {
        let work = try TempDir(prefix: "hashed-names")
        let file = work.file("known_hosts")
        try "[nas.local]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHh4\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        let keygen = try #require(TestProcess.which("ssh-keygen"))
        #expect(try TestProcess.run(keygen, ["-H", "-f", file]).status == 0)
        let theirs = try #require(try String(contentsOfFile: file, encoding: .utf8).split(separator: " ").first)
        #expect(theirs.hasPrefix("|1|"))
        #expect(KnownHostsFile.names(theirs, "[nas.local]:2222"))
        #expect(!KnownHostsFile.names(theirs, "nas.local"))
        let ours = KnownHostsFile.hashedName("[nas.local]:2222")
        #expect(ours != KnownHostsFile.hashedName("[nas.local]:2222"), "a new salt every time")
        #expect(KnownHostsFile.names(ours[...], "[nas.local]:2222") && !KnownHostsFile.names(ours[...], "nas"))
        #expect(KnownHostsFile.names("a.example,nas.local", "nas.local"))
    }

    @Test func sshConfigIsReadAsSshReadsIt() throws {
        let work = try TempDir(prefix: "ssh-config")
        let user = work.file("config")
        let system = work.file("ssh_config")
        try FileManager.default.createDirectory(atPath: work.file("conf.d"), withIntermediateDirectories: true)
        try "Host *\n    HashKnownHosts yes\n".write(toFile: system, atomically: true, encoding: .utf8)
        #expect(SSHClientConfig.hashKnownHosts(host: "nas", files: [user, system]))
        #expect(!SSHClientConfig.hashKnownHosts(host: "nas", files: []), "OpenSSH's own default is no")
        // The first value found wins: the user's file before the system's, a
        // matching Host block before `Host *`, an Include in place.
        try """
        # comment
        Host nas !nas.* 10.0.0.?
          hashknownhosts=no
        Include \(work.file("conf.d"))/*.conf
        """.write(toFile: user, atomically: true, encoding: .utf8)
        try "HashKnownHosts no\n".write(toFile: work.file("conf.d/00-plain.conf"), atomically: true, encoding: .utf8)
        #expect(!SSHClientConfig.hashKnownHosts(host: "nas", files: [user, system]))
        #expect(!SSHClientConfig.hashKnownHosts(host: "10.0.0.7", files: [user, system]))
        #expect(SSHClientConfig.hashKnownHosts(host: "nas.lan", files: [user, system]), "negated, then Host *")
        #expect(SSHClientConfig.hashKnownHosts(host: "10.0.0.70", files: [user, system]))
        // The Include is inside `Host nas ...`: it applies to those hosts only.
        #expect(SSHClientConfig.hashKnownHosts(host: "other", files: [user, system]))
        try "Include \(work.file("conf.d"))/*.conf\n".write(toFile: user, atomically: true, encoding: .utf8)
        #expect(!SSHClientConfig.hashKnownHosts(host: "other", files: [user, system]))
    }
}

/// Where the default policy looks: `$HOME/.ssh`, with `HOME` read by name.
struct HostKeyPolicyFileTests {
    @Test func theDefaultPolicyReadsHomeByName() {
        let given = ["HOME": "/home/ann", "PATH": "/bin"]
        #expect(HostKeyPolicy.openSSH.file(environment: given) == "/home/ann/.ssh/known_hosts")
        #expect(HostKeyPolicy.openSSH.identity(environment: given) == "strict|/home/ann/.ssh/known_hosts")
        #expect(HostKeyPolicy.openSSHAcceptNew.identity(environment: given) == "accept-new|/home/ann/.ssh/known_hosts")
        #expect(
            HostKeyPolicy.openSSH.configFiles(environment: given) == [
                "/home/ann/.ssh/config", SSHClientConfig.systemFile,
            ])
        // Without HOME: the account's home, as before.
        #expect(HostKeyPolicy.openSSH.file(environment: [:]) == NSHomeDirectory() + "/.ssh/known_hosts")
        // Nil: this process's HOME.
        let home = getenv("HOME").map { String(cString: $0) } ?? NSHomeDirectory()
        #expect(HostKeyPolicy.openSSH.file() == home + "/.ssh/known_hosts")
        #expect(HostKeyPolicy.openSSH.configFiles().first == home + "/.ssh/config")
        // A named file or no check ignore the environment.
        #expect(HostKeyPolicy.knownHosts("/k", acceptNew: true).file(environment: given) == "/k")
        #expect(HostKeyPolicy.knownHosts("/k").configFiles(environment: given) == [SSHClientConfig.systemFile])
        #expect(HostKeyPolicy.insecure.file(environment: given) == nil)
        #expect(HostKeyPolicy.insecure.identity(environment: given) == "insecure")
    }
}
