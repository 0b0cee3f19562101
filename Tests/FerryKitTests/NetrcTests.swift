import Testing

@testable import FerryKit

/// `~/.netrc` as curl reads it.
struct NetrcTests {
    @Test func plainEntriesAndTheDefault() {
        let text = """
            machine ftp.example.com login alice password s3cret
            machine other.example.com
              login bob
              password b0b
            default login anonymous password guest@
            """
        #expect(
            Netrc.lookup(text, host: "FTP.example.com", user: nil) == Credentials(user: "alice", password: "s3cret"))
        #expect(Netrc.lookup(text, host: "other.example.com", user: nil) == Credentials(user: "bob", password: "b0b"))
        #expect(Netrc.lookup(text, host: "other.example.com", user: "carol") == nil)
        #expect(Netrc.lookup(text, host: "elsewhere", user: nil) == Credentials(user: "anonymous", password: "guest@"))
    }

    @Test func quotedPasswordsKeepSpacesAndEscapes() {
        let text = #"""
            machine a login "user one" password "s3cret pass"
            machine b login u password "q\"uote\\back\tslash"
            machine c login u password "#not-a-comment"
            """#
        #expect(Netrc.lookup(text, host: "a", user: nil) == Credentials(user: "user one", password: "s3cret pass"))
        #expect(Netrc.lookup(text, host: "b", user: nil)?.password == "q\"uote\\back\tslash")
        #expect(Netrc.lookup(text, host: "c", user: nil)?.password == "#not-a-comment")
    }

    @Test func commentsCRLFAndMacrosAreSkipped() {
        let text =
            "# machine a login wrong password wrong\r\n"
            + "machine a login right password r1ght # trailing comment\r\n"
            + "macdef init\r\n"
            + "machine b login evil password evil\r\n"
            + "\r\n"
            + "machine b login good password g00d\r\n"
        #expect(Netrc.lookup(text, host: "a", user: nil) == Credentials(user: "right", password: "r1ght"))
        #expect(Netrc.lookup(text, host: "b", user: nil) == Credentials(user: "good", password: "g00d"))
    }
}
