import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// `ssh_config` as far as it decides an SFTP connection (issue 32 item 3):
/// `Match` criteria, `UserKnownHostsFile`, `StrictHostKeyChecking`, and the
/// `ProxyJump`/`ProxyCommand` that become an `ssh` child (`SSHProxy`).
struct SSHClientConfigTests {
    func settings(_ text: String, host: String) throws -> SSHClientConfig.HostSettings {
        let work = try TempDir(prefix: "ssh-config")
        try text.write(toFile: work.file("config"), atomically: true, encoding: .utf8)
        return SSHClientConfig.settings(host: host, files: [work.file("config")], home: "/home/ann", localUser: "ann")
    }

    @Test func matchHostOriginalHostAndLocalUserAreEvaluated() throws {
        let text = """
            Host nas
                HostName nas.lan
            Match host *.lan !originalhost other
                User lanuser
            Match originalhost nas,box localuser ann
                Port 2222
            Match localuser bob
                IdentityFile ~/bob_key
            Match exec "true"
                IdentityFile ~/exec_key
            Match all
                IdentityFile ~/all_key
            """
        let nas = try settings(text, host: "nas")
        // `host` sees the HostName found so far; `originalhost` the alias.
        #expect(nas.hostName == "nas.lan" && nas.user == "lanuser" && nas.port == 2222)
        // Not bob; `exec` is not run, so its block is not taken.
        #expect(nas.identityFiles == ["/home/ann/all_key"])
        let box = try settings(text, host: "box")
        #expect(box.user == nil && box.port == 2222)
        let other = try settings(text, host: "other.lan")
        #expect(other.user == "lanuser" && other.port == nil)
        #expect(try settings("Match !all\n  Port 1\n", host: "x").port == nil)
        #expect(try settings("Match host\n  Port 1\n", host: "x").port == nil, "a criterion without patterns")
    }

    @Test func knownHostsFilesAndStrictChecking() throws {
        let s = try settings(
            """
            Host nas
                UserKnownHostsFile ~/.ssh/nas_hosts /etc/shared_hosts
                StrictHostKeyChecking accept-new
            Host *
                UserKnownHostsFile ~/.ssh/other
                StrictHostKeyChecking yes
            """, host: "nas")
        #expect(s.userKnownHostsFiles == ["/home/ann/.ssh/nas_hosts", "/etc/shared_hosts"])
        #expect(s.strictHostKeyChecking == "accept-new")
        let policy = HostKeyPolicy.openSSH.applying(s)
        #expect(policy.file() == "/home/ann/.ssh/nas_hosts" && policy.otherFiles() == ["/etc/shared_hosts"])
        #expect(policy.acceptNew)
        #expect(policy.identity() == "accept-new|/home/ann/.ssh/nas_hosts|/etc/shared_hosts")
        // A policy the program chose, or none, is not the configuration's to change.
        #expect(HostKeyPolicy.knownHosts("/k").applying(s) == .knownHosts("/k"))
        #expect(HostKeyPolicy.insecure.applying(s) == .insecure)
        // `no` or `ask` never loosen the check: only accept-new records.
        for loose in ["no", "off", "ask"] {
            var t = s
            t.strictHostKeyChecking = loose
            #expect(!HostKeyPolicy.openSSH.applying(t).acceptNew)
        }
    }

    @Test func proxyJumpAndProxyCommandWhicheverComesFirst() throws {
        let jump = try settings(
            "Host nas\n  ProxyJump ann@gate:2200,ssh://[::1]:22\n  ProxyCommand nc %h %p\n", host: "nas")
        #expect(jump.proxy == .jump(["ann@gate:2200", "ssh://[::1]:22"]))
        let command = try settings("Host nas\n  ProxyCommand nc -q0 %h %p\nHost *\n  ProxyJump gate\n", host: "nas")
        #expect(command.proxy == .command("nc -q0 %h %p"))
        #expect(try settings("Host nas\n  ProxyJump none\nHost *\n  ProxyJump gate\n", host: "nas").proxy == nil)
        #expect(try settings("ProxyCommand=none\n", host: "nas").proxy == nil)
    }

    @Test func theProxyCommandIsOpenSSHsOwn() {
        let one = SSHProxy.make(
            .jump(["gate"]), host: "10.0.0.5", port: 22, user: "ann", alias: "nas", configFile: nil,
            acceptNewHostKey: false)
        #expect(one.arguments == ["ssh", "-o", "BatchMode=yes", "-W", "[10.0.0.5]:22", "--", "gate"])
        #expect(one.description == "ProxyJump gate")
        // For a person to run: quoted where a shell would read it otherwise.
        #expect(one.shellCommand == "ssh -o BatchMode=yes -W '[10.0.0.5]:22' -- gate")
        // The last hop is the destination, the ones before it ssh's own -J.
        let chain = SSHProxy.make(
            .jump(["a", "bob@[fe80::1]:2200"]), host: "nas.lan", port: 2222, user: "ann", alias: "nas",
            configFile: "/tmp/home/.ssh/config", acceptNewHostKey: true)
        #expect(
            chain.arguments == [
                "ssh", "-F", "/tmp/home/.ssh/config", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=accept-new",
                "-J", "a", "-l", "bob", "-p", "2200", "-W", "[nas.lan]:2222", "--", "fe80::1",
            ])
        let command = SSHProxy.make(
            .command("nc -X connect %h %p # %r@%n 100%%"), host: "nas.lan", port: 22, user: "ann", alias: "nas",
            configFile: nil, acceptNewHostKey: false)
        #expect(command.arguments == ["/bin/sh", "-c", "exec nc -X connect nas.lan 22 # ann@nas 100%"])
        #expect(
            SSHProxy(arguments: ["sh", "-c", "it's"], description: "").shellCommand == #"sh -c 'it'\''s'"#)
        #expect(SSHProxy.Jump("ssh://u@h:7") == SSHProxy.Jump(user: "u", host: "h", port: 7))
        #expect(SSHProxy.Jump("h") == SSHProxy.Jump(user: nil, host: "h", port: nil))
    }

    @Test func aKeyIsKnownInAnyFileAndChangedWhenAnotherOfItsTypeIsThere() throws {
        let work = try TempDir(prefix: "known-hosts")
        let key: [UInt8] = Array("key-one".utf8)
        let other: [UInt8] = Array("key-two".utf8)
        let b64 = Data(key).base64EncodedString()
        try """
        # comment
        @revoked [nas]:2222 ssh-ed25519 \(Data(other).base64EncodedString())
        gate ssh-ed25519 \(Data(other).base64EncodedString())
        \(KnownHostsFile.hashedName("[nas]:2222")) ssh-ed25519 \(b64)
        """.write(toFile: work.file("a"), atomically: true, encoding: .utf8)
        #expect(KnownHostsFile.lookup("[nas]:2222", type: "ssh-ed25519", key: key, in: work.file("a")) == .known)
        #expect(KnownHostsFile.lookup("gate", type: "ssh-ed25519", key: key, in: work.file("a")) == .changed)
        #expect(KnownHostsFile.lookup("gate", type: "ssh-rsa", key: key, in: work.file("a")) == .absent)
        #expect(KnownHostsFile.lookup("nas", type: "ssh-ed25519", key: key, in: work.file("missing")) == .absent)
    }
}
