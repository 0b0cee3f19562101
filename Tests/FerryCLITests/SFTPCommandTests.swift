import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ferry` on `sftp://` URLs, run as a process with its own HOME (so its own
/// `~/.ssh`), against sshd and an asyncssh server started by the test.
@Suite(.serialized)
struct SFTPCommandTests {
    let work: TempDir
    let home: TempDir
    let ferry = TestProcess.ferryExecutable()

    init() throws {
        work = try TempDir(prefix: "sftp-cli")
        home = try TempDir(prefix: "sftp-home")
        try FileManager.default.createDirectory(atPath: home.file(".ssh"), withIntermediateDirectories: true)
    }

    var env: [String: String] { ["HOME": home.path, "SSH_AUTH_SOCK": "", "NETRC": home.file("no-netrc")] }

    func run(_ args: [String], env extra: [String: String] = [:]) throws -> TestProcess.Output {
        try TestProcess.run(ferry, args, cwd: work.path, environment: env.merging(extra) { $1 })
    }

    func trust(_ line: String) throws {
        let file = home.file(".ssh/known_hosts")
        let old = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        try (old + line + "\n").write(toFile: file, atomically: true, encoding: .utf8)
    }

    /// `sftp://nas/` where `nas` is a Host in `~/.ssh/config` connects as `ssh nas`
    /// would: its HostName, Port, User and IdentityFile (a key not named id_*),
    /// with IdentitiesOnly (issue 32 item 3).
    @Test func aHostAliasInSSHConfigGivesHostPortUserAndKey() async throws {
        let server = try await OpenSSHTestServer()
        defer { server.stop() }
        try trust(server.knownHostsLine())
        try FileManager.default.createDirectory(atPath: home.file("keys"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: server.keys.clientKey, toPath: home.file("keys/nas_key"))
        chmod(home.file("keys/nas_key"), 0o600)
        try """
        Host other
            HostName 192.0.2.1

        Host nas
            HostName 127.0.0.1
            Port \(server.port)
            User \(server.user)
            IdentityFile ~/keys/nas_key
            IdentitiesOnly yes
        """.write(toFile: home.file(".ssh/config"), atomically: true, encoding: .utf8)
        try Data("via the alias".utf8).write(to: URL(fileURLWithPath: server.local("alias.txt")))
        let ls = try run(["ls", "sftp://nas\(server.root)/"])
        #expect(ls.status == 0, "\(ls.stderr)")
        #expect(ls.stdout.contains("alias.txt"), "\(ls.stdout)")
        let get = try run(["get", "sftp://nas\(server.root)/alias.txt"])
        #expect(get.status == 0, "\(get.stderr)")
        #expect(FileManager.default.contents(atPath: work.file("alias.txt")) == Data("via the alias".utf8))
        // The URL's own port and user still win over the file's.
        let wrongPort = try run(["ls", "sftp://nas:1\(server.root)/", "--connect-timeout", "2"])
        #expect(wrongPort.status != 0)
    }

    /// A copy of the server's client key in the test's HOME, for an `IdentityFile`.
    func key(_ server: OpenSSHTestServer, named name: String) throws -> String {
        try FileManager.default.createDirectory(atPath: home.file("keys"), withIntermediateDirectories: true)
        let path = home.file("keys/" + name)
        if !FileManager.default.fileExists(atPath: path) {
            try FileManager.default.copyItem(atPath: server.keys.clientKey, toPath: path)
        }
        chmod(path, 0o600)
        return path
    }

    /// `UserKnownHostsFile` of a Host alias: the key is found in its second file,
    /// ~/.ssh/known_hosts is neither read nor written, and a new key is
    /// recorded in the first file only (issue 32 item 3).
    @Test func aHostAliasWithIdentityFileAndUserKnownHostsFile() async throws {
        let server = try await OpenSSHTestServer()
        defer { server.stop() }
        _ = try key(server, named: "nas_key")
        try FileManager.default.createDirectory(atPath: home.file("kh"), withIntermediateDirectories: true)
        try (server.knownHostsLine() + "\n").write(toFile: home.file("kh/shared"), atomically: true, encoding: .utf8)
        // The default file names the server with another key: were it read, the key would be "changed".
        let line = try server.knownHostsLine().split(separator: " ")
        try SSHTestKeys.generate(home.file("keys/other_host"))
        try trust(
            "\(line[0]) "
                + (try SSHTestKeys.publicKey(of: home.file("keys/other_host")).split(separator: " ")[0...1].joined(
                    separator: " ")))
        try """
        Host nas
            HostName 127.0.0.1
            Port \(server.port)
            User \(server.user)
            IdentityFile ~/keys/nas_key
            IdentitiesOnly yes
            UserKnownHostsFile ~/kh/mine ~/kh/shared
        Host fresh
            HostName 127.0.0.1
            Port \(server.port)
            User \(server.user)
            IdentityFile ~/keys/nas_key
            UserKnownHostsFile ~/kh/fresh
        Host trusting
            HostName 127.0.0.1
            Port \(server.port)
            User \(server.user)
            IdentityFile ~/keys/nas_key
            UserKnownHostsFile ~/kh/trusting
            StrictHostKeyChecking accept-new
        """.write(toFile: home.file(".ssh/config"), atomically: true, encoding: .utf8)
        try Data("known elsewhere".utf8).write(to: URL(fileURLWithPath: server.local("k.txt")))
        let before = try String(contentsOfFile: home.file(".ssh/known_hosts"), encoding: .utf8)
        let ls = try run(["ls", "sftp://nas\(server.root)/"])
        #expect(ls.status == 0 && ls.stdout.contains("k.txt"), "\(ls.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home.file("kh/mine")))
        // An unknown host under the alias's own file: refused, naming that file.
        let refused = try run(["ls", "sftp://fresh\(server.root)/"])
        #expect(refused.status != 0 && refused.stderr.contains(home.file("kh/fresh")), "\(refused.stderr)")
        let accepted = try run(["ls", "sftp://fresh\(server.root)/", "--accept-new-host-key"])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        let recorded = try String(contentsOfFile: home.file("kh/fresh"), encoding: .utf8)
        #expect(recorded.contains(String(line[2])), "\(recorded)")
        // StrictHostKeyChecking accept-new in the file records as the flag does.
        let trusting = try run(["ls", "sftp://trusting\(server.root)/"])
        #expect(trusting.status == 0, "\(trusting.stderr)")
        #expect(try String(contentsOfFile: home.file("kh/trusting"), encoding: .utf8).contains(String(line[2])))
        #expect(try String(contentsOfFile: home.file(".ssh/known_hosts"), encoding: .utf8) == before)
    }

    /// The config of a jump host (`gate`) and a server behind it (`nas`,
    /// `ProxyJump gate`). OpenSSH's `ssh` reads the jump host's settings with
    /// `-F` from this HOME, but expands `~` to the account's home: the jump
    /// host's files are named in full. `gatePort`: where `gate` is reached
    /// instead of its own port (a relay in front of it, or nobody).
    func writeJumpConfig(gate: OpenSSHTestServer, gatePort: Int? = nil, gateKey: String, nas: OpenSSHTestServer)
        throws
    {
        let gateKeyLine = try gate.knownHostsLine().split(separator: " ")
        try "[127.0.0.1]:\(gatePort ?? gate.port) \(gateKeyLine[1]) \(gateKeyLine[2])\n".write(
            toFile: home.file("gate_hosts"), atomically: true, encoding: .utf8)
        try """
        Host gate
            HostName 127.0.0.1
            Port \(gatePort ?? gate.port)
            User \(gate.user)
            IdentityFile \(gateKey)
            IdentitiesOnly yes
            UserKnownHostsFile \(home.file("gate_hosts"))
            GlobalKnownHostsFile /dev/null
            StrictHostKeyChecking yes
        Host nas
            HostName 127.0.0.1
            Port \(nas.port)
            User \(nas.user)
            IdentityFile ~/keys/nas_key
            IdentitiesOnly yes
            ProxyJump gate
        """.write(toFile: home.file(".ssh/config"), atomically: true, encoding: .utf8)
    }

    /// `sftp://nas/` with `ProxyJump gate` lists, gets and puts through the jump
    /// host (its sshd opens the forwarded connection; a relay in front of it
    /// counts the bytes), and the host key checked is the final server's, not
    /// the jump host's (issue 32 item 3). Downloads go by OpenSSH's `ssh`, which
    /// follows the ProxyJump itself, listings and uploads by libssh2 through
    /// Ferry's `ssh -W` child.
    @Test func aProxyJumpHostCarriesListGetAndPut() async throws {
        let gate = try await OpenSSHTestServer()
        defer { gate.stop() }
        let nas = try await OpenSSHTestServer()
        defer { nas.stop() }
        let relay = try CountingRelay(upstreamPort: gate.port)
        defer { relay.stop() }
        try writeJumpConfig(gate: gate, gatePort: relay.port, gateKey: try key(gate, named: "gate_key"), nas: nas)
        _ = try key(nas, named: "nas_key")
        // ~/.ssh/known_hosts knows only the final server: the jump host's key is ssh's.
        try trust(nas.knownHostsLine())
        try TestData.file(nas.local("far.bin"), size: 3_000_000, seed: 9)
        let ls = try run(["ls", "sftp://nas\(nas.root)/"])
        #expect(ls.status == 0 && ls.stdout.contains("far.bin"), "\(ls.stderr)")
        let downBefore = relay.bytesDown
        let get = try run(["get", "sftp://nas\(nas.root)/far.bin", "-j", "2"])
        #expect(get.status == 0, "\(get.stderr)")
        // The file came through the jump host.
        #expect(relay.bytesDown - downBefore > 3_000_000, "\(relay.bytesDown - downBefore) bytes through gate")
        #expect(
            FileManager.default.contents(atPath: work.file("far.bin"))
                == FileManager.default.contents(atPath: nas.local("far.bin")))
        let upBefore = relay.bytesUp
        let put = try run(["put", work.file("far.bin"), "sftp://nas\(nas.root)/back.bin"])
        #expect(put.status == 0, "\(put.stderr)")
        #expect(relay.bytesUp - upBefore > 3_000_000, "\(relay.bytesUp - upBefore) bytes through gate")
        #expect(
            FileManager.default.contents(atPath: nas.local("back.bin"))
                == FileManager.default.contents(atPath: nas.local("far.bin")))
        // The jump host's sshd opened the forwarded connections (it logs each login).
        #expect(gate.log.contains("Accepted publickey"), "\(gate.log)")
        // No ssh child outlives ferry: neither Ferry's `ssh -W` nor ssh's own
        // ProxyJump leg (`-W [127.0.0.1]:port gate`), nor an `ssh -s ... nas sftp`.
        let pgrep = try #require(TestProcess.which("pgrep"))
        let children = "W \\[127.0.0.1\\]:\(nas.port)|-s -- nas sftp"
        let gone = Date().addingTimeInterval(5)
        while try TestProcess.run(pgrep, ["-f", children]).status == 0 && Date() < gone { usleep(50_000) }
        let left = try TestProcess.run(pgrep, ["-af", children])
        #expect(left.status == 1, "an ssh child is left: \(left.stdout)")
        // ProxyCommand: the same through a command of the user's, with %h and %p expanded.
        let config = try String(contentsOfFile: home.file(".ssh/config"), encoding: .utf8)
        try
            (config + """

                Host viacommand
                    HostName 127.0.0.1
                    Port \(nas.port)
                    User \(nas.user)
                    IdentityFile ~/keys/nas_key
                    ProxyCommand ssh -F \(home.file(".ssh/config")) -o BatchMode=yes -W %h:%p gate
                """).write(toFile: home.file(".ssh/config"), atomically: true, encoding: .utf8)
        let viaCommand = try run(["ls", "sftp://viacommand\(nas.root)/"])
        #expect(viaCommand.status == 0 && viaCommand.stdout.contains("back.bin"), "\(viaCommand.stderr)")
        // The final server's key is what Ferry checks: the jump host's key under its name is a changed key.
        let gateKeyLine = try gate.knownHostsLine().split(separator: " ")
        try "[127.0.0.1]:\(nas.port) \(gateKeyLine[1]) \(gateKeyLine[2])\n".write(
            toFile: home.file(".ssh/known_hosts"), atomically: true, encoding: .utf8)
        let changed = try run(["ls", "sftp://nas\(nas.root)/"])
        #expect(changed.status != 0 && changed.stderr.contains("HAS CHANGED"), "\(changed.stderr)")
    }

    /// A jump host that cannot be reached or refuses the login: the error says
    /// which ProxyJump failed, in ssh's own words, and names no secret.
    @Test func aFailingJumpHostSaysWhyInSshsWords() async throws {
        let gate = try await OpenSSHTestServer()
        defer { gate.stop() }
        let nas = try await OpenSSHTestServer()
        defer { nas.stop() }
        _ = try key(nas, named: "nas_key")
        try trust(nas.knownHostsLine())
        // Nobody listens on a free port.
        try writeJumpConfig(
            gate: gate, gatePort: Loopback.freePort(), gateKey: try key(gate, named: "gate_key"), nas: nas)
        let refused = try run(["ls", "sftp://nas\(nas.root)/"])
        #expect(refused.status != 0, "\(refused.stdout)")
        #expect(
            refused.stderr.contains("ProxyJump gate") && refused.stderr.contains("Connection refused"),
            "\(refused.stderr)")
        // The jump host refuses a key it does not know.
        let stranger = home.file("keys/stranger")
        try SSHTestKeys.generate(stranger)
        try writeJumpConfig(gate: gate, gateKey: stranger, nas: nas)
        let denied = try run(["ls", "sftp://nas\(nas.root)/"], env: ["FERRY_PASSWORD": "Secret-jump-word"])
        #expect(denied.status != 0)
        #expect(
            denied.stderr.contains("ProxyJump gate") && denied.stderr.contains("Permission denied"), "\(denied.stderr)")
        #expect(!denied.stderr.contains("Secret-jump-word"))
    }

    @Test func killNineThenTheSameCommandResumesByteIdentical() async throws {
        let server = try await AsyncSSHTestServer(faults: .init(readDelayMilliseconds: 10))
        try trust(server.knownHostsLine())
        let data = TestData.bytes(4_000_000, seed: 9)
        try server.write(data, at: "/big.bin")
        let url = server.url("/big.bin")
        let password = ["FERRY_PASSWORD": AsyncSSHTestServer.password]
        let first = try ServerProcess(
            ferry, ["get", url, "--quiet"], cwd: work.path, logPath: work.file("first.log"),
            environment: env.merging(password) { $1 })
        let part = work.file("big.bin.part")
        let deadline = Date().addingTimeInterval(20)
        // Killed once the part has its journal (written at 1 MiB, just after the
        // bytes): a part killed before it is started over, by design, not resumed.
        while ((LocalFileSize.of(part) ?? 0) < 1_000_000 || !FileManager.default.fileExists(atPath: part + ".journal"))
            && Date() < deadline
        {
            usleep(20_000)
        }
        first.signal(SIGKILL)
        first.stop()
        let partSize = LocalFileSize.of(part) ?? 0
        #expect(partSize >= 1_000_000 && partSize < 4_000_000)
        let sessionsBefore = server.reads.map(\.session).max() ?? 0

        let again = try run(["get", url, "--json"], env: password)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.file("big.bin"))) == data)
        #expect(!FileManager.default.fileExists(atPath: part))
        // The second run's first read starts exactly where the part ended.
        let second = server.reads.filter { $0.session > sessionsBefore }
        #expect(second.first?.offset == partSize, "\(second.prefix(3).map(\.offset)) part \(partSize)")
        #expect(!second.contains { $0.offset < partSize })
        #expect(!(again.stdout + again.stderr).contains(AsyncSSHTestServer.password))
    }

    /// The same kill -9 against OpenSSH's sshd with a key, over each transport:
    /// `automatic` downloads through an `ssh -s sftp` child, which must go with
    /// Ferry, and the rerun fetches only what the part lacks (a counting relay,
    /// paced at 2 MB/s so the kill lands mid-file, shows the bytes the server sent).
    @Test(arguments: ["automatic", "libssh2"])
    func killNineOverOpenSSHResumesByteIdentical(transport: String) async throws {
        let server = try await OpenSSHTestServer()
        defer { server.stop() }
        let relay = try CountingRelay(upstreamPort: server.port, downBytesPerSecond: 2_000_000)
        defer { relay.stop() }
        let line = try server.knownHostsLine().split(separator: " ", maxSplits: 1)
        try trust("[127.0.0.1]:\(relay.port) \(line[1])")
        let identity = try key(server, named: "nas_key")
        let size = 8_000_000
        try TestData.file(server.local("big.bin"), size: size, seed: 12)
        let url = "sftp://\(server.user)@127.0.0.1:\(relay.port)\(server.root)/big.bin"
        let environment = env.merging(["FERRY_SSH_TRANSPORT": transport]) { $1 }
        let first = try ServerProcess(
            ferry, ["get", url, "--identity", identity, "--quiet"], cwd: work.path,
            logPath: work.file("first-\(transport).log"), environment: environment)
        let part = work.file("big.bin.part")
        let deadline = Date().addingTimeInterval(20)
        while ((LocalFileSize.of(part) ?? 0) < 1_000_000 || !FileManager.default.fileExists(atPath: part + ".journal"))
            && Date() < deadline
        {
            usleep(20_000)
        }
        // The child that carries the file under the default transport, found by its port.
        let pattern = "ssh .*-p \(relay.port) -l \(server.user) -s"
        let pgrep = try #require(TestProcess.which("pgrep"))
        let children = try TestProcess.run(pgrep, ["-f", pattern])
        #expect(
            (children.status == 0) == (transport == "automatic"),
            "ssh children: \(children.stdout) (\(transport))")
        first.signal(SIGKILL)
        first.stop()
        let partSize = LocalFileSize.of(part) ?? 0
        #expect(partSize >= 1_000_000 && partSize < Int64(size), "part \(partSize)")
        // ssh reads EOF on its stdin when Ferry is gone and ends; none is left behind.
        let gone = Date().addingTimeInterval(5)
        while try TestProcess.run(pgrep, ["-f", pattern]).status == 0 && Date() < gone { usleep(50_000) }
        #expect(try TestProcess.run(pgrep, ["-f", pattern]).status != 0, "an ssh child outlived ferry")

        let downBefore = relay.bytesDown
        let again = try TestProcess.run(
            ferry, ["get", url, "--identity", identity, "--json"], cwd: work.path, environment: environment)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            FileManager.default.contents(atPath: work.file("big.bin"))
                == FileManager.default.contents(atPath: server.local("big.bin")))
        #expect(!FileManager.default.fileExists(atPath: part))
        // What the rerun carried: the rest of the file plus the SSH session's own
        // bytes (key exchange, listing, packet headers), never the part again.
        let sent = relay.bytesDown - downBefore
        let rest = size - Int(partSize)
        #expect(sent >= rest && sent < rest + 200_000, "sent \(sent), rest \(rest), part \(partSize)")
    }

    @Test func unknownHostThenAcceptNewThenKnown() async throws {
        let server = try await AsyncSSHTestServer()
        let url = server.url("/", password: AsyncSSHTestServer.password)
        let refused = try run(["ls", url])
        #expect(refused.status == 1)
        let fingerprint = try SSHTestKeys.fingerprint(of: server.keys.hostKey)
        #expect(refused.stderr.contains(fingerprint) && refused.stderr.contains("--accept-new-host-key"))
        #expect(!FileManager.default.fileExists(atPath: home.file(".ssh/known_hosts")))
        let accepted = try run(["ls", url, "--accept-new-host-key"])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        // Written as Debian's ssh writes it (/etc/ssh/ssh_config: HashKnownHosts yes):
        // hashed, and found by ssh-keygen -F under the name ssh looks it up by.
        let known = try String(contentsOfFile: home.file(".ssh/known_hosts"), encoding: .utf8)
        let line = try server.knownHostsLine().split(separator: " ")
        #expect(known.hasPrefix("|1|") && known.hasSuffix(" \(line[1]) \(line[2])\n"), "\(known)")
        let keygen = try #require(TestProcess.which("ssh-keygen"))
        let found = try TestProcess.run(keygen, ["-F", String(line[0]), "-f", home.file(".ssh/known_hosts")])
        #expect(found.status == 0 && found.stdout.contains("found: line 1"), "\(found.stdout)")
        #expect(try run(["ls", url]).status == 0)
        for out in [refused, accepted] {
            #expect(!(out.stdout + out.stderr).contains(AsyncSSHTestServer.password))
        }
    }

    /// `FERRY_SSH_TRANSPORT` names what carries downloads; a misspelt one is bad
    /// usage (exit 2, the choices named) before anything connects, and
    /// `libssh2` downloads as the default does.
    @Test func theTransportVariableIsCheckedAndLibssh2StillDownloads() async throws {
        let refused = try run(["ls", "sftp://127.0.0.1:1/x"], env: ["FERRY_SSH_TRANSPORT": "ssh"])
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("FERRY_SSH_TRANSPORT=ssh") && refused.stderr.contains("libssh2"))
        let server = try await OpenSSHTestServer()
        defer { server.stop() }
        _ = try key(server, named: "nas_key")
        try trust(server.knownHostsLine())
        let bytes = try TestData.file(server.local("one.bin"), size: 1_500_000, seed: 4)
        let get = try run(
            ["get", server.url() + "/one.bin", "--identity", home.file("keys/nas_key")],
            env: ["FERRY_SSH_TRANSPORT": "libssh2"])
        #expect(get.status == 0, "\(get.stderr)")
        #expect(FileManager.default.contents(atPath: work.file("one.bin")) == Data(bytes))
    }

    @Test func wrongPasswordFailsOnceAndInsecureWarns() async throws {
        let server = try await AsyncSSHTestServer()
        let wrong = "Wr0ng-secret-word"
        let out = try run(["ls", server.url("/", password: wrong), "--insecure"])
        #expect(out.status == 1)
        #expect(out.stderr.contains("--insecure: the host key of 127.0.0.1 is not checked"), "\(out.stderr)")
        #expect(
            out.stderr.contains("refused ferry with password") && out.stderr.contains("sftp://ferry@127.0.0.1"),
            "\(out.stderr)")
        #expect(!(out.stdout + out.stderr).contains(wrong))
        let lines = out.stderr.split(separator: "\n").filter { $0.hasPrefix("ferry ls:") }
        #expect(lines.count == 1, "\(out.stderr)")
        // The right password with --insecure: no known_hosts at all, and it connects (with the warning).
        let right = try run(["ls", server.url("/", password: AsyncSSHTestServer.password), "--insecure"])
        #expect(right.status == 0 && right.stderr.contains("is not checked"), "\(right.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home.file(".ssh/known_hosts")))
    }

    @Test func keyFromTheAgentAndAPassphraseFromTheEnvironment() async throws {
        let keys = try TempDir(prefix: "sftp-keys")
        let locked = keys.file("locked_ed25519")
        let passphrase = "correct horse battery"
        try SSHTestKeys.generate(locked, passphrase: passphrase)
        let server = try await OpenSSHTestServer(extraAuthorizedKeys: [try SSHTestKeys.publicKey(of: locked)])
        try trust(server.knownHostsLine())
        try FileManager.default.createDirectory(atPath: server.local("d"), withIntermediateDirectories: true)

        // A passphrase-protected key: without FERRY_KEY_PASSPHRASE it fails once and says so.
        let noPass = try run(["ls", server.url(), "--identity", locked])
        #expect(noPass.status == 1)
        #expect(noPass.stderr.contains("FERRY_KEY_PASSPHRASE"), "\(noPass.stderr)")
        let withPass = try run(["ls", server.url(), "--identity", locked], env: ["FERRY_KEY_PASSPHRASE": passphrase])
        #expect(withPass.status == 0, "\(withPass.stderr)")
        #expect(withPass.stdout.contains("d/"))
        #expect(!(noPass.stderr + withPass.stdout + withPass.stderr).contains(passphrase))

        // No key files in ~/.ssh: the agent's key logs in.
        let socket = keys.file("agent.sock")
        let agent = try ServerProcess(
            TestProcess.which("ssh-agent")!, ["-D", "-a", socket], logPath: keys.file("agent.log"))
        defer { agent.stop() }
        let deadline = Date().addingTimeInterval(5)
        while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(20_000) }
        let added = try TestProcess.run(
            TestProcess.which("ssh-add")!, [server.keys.clientKey], environment: ["SSH_AUTH_SOCK": socket])
        #expect(added.status == 0, "\(added.stderr)")
        let viaAgent = try run(["ls", server.url()], env: ["SSH_AUTH_SOCK": socket])
        #expect(viaAgent.status == 0, "\(viaAgent.stderr)")
        let noWay = try run(["ls", server.url()])
        #expect(noWay.status == 1 && noWay.stderr.contains("no way to log in"), "\(noWay.stderr)")
    }

    @Test func syncImportsOnceAndPutGetRoundTrip() async throws {
        let server = try await OpenSSHTestServer()
        try trust(server.knownHostsLine())
        try FileManager.default.copyItem(atPath: server.keys.clientKey, toPath: home.file(".ssh/id_ed25519"))
        try FileManager.default.createDirectory(atPath: server.local("cam"), withIntermediateDirectories: true)
        for i in 0..<5 { try TestData.file(server.local("cam/IMG_\(i).JPG"), size: 10_000 + i, seed: UInt64(i)) }
        let first = try run(["sync", server.url("cam"), work.file("photos"), "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: work.file("photos")).filter { $0.hasSuffix(".JPG") }
                .count == 5)
        let second = try run(["sync", server.url("cam"), work.file("photos")])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(!second.stdout.contains("IMG_"), "\(second.stdout)")

        try TestData.file(work.file("up.bin"), size: 300_000, seed: 4)
        let put = try run(["put", work.file("up.bin"), server.url("cam/")])
        #expect(put.status == 0, "\(put.stderr)")
        let get = try run(["get", server.url("cam/up.bin"), "-o", work.file("back.bin")])
        #expect(get.status == 0, "\(get.stderr)")
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: work.file("back.bin")))
                == Data(contentsOf: URL(fileURLWithPath: work.file("up.bin"))))
    }
}
