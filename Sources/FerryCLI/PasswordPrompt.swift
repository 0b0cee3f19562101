import FerryKit
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The password asked on the terminal when a server refused a login that had
/// none (as `curl -u user` and `lftp user@host` ask): read without echo, held
/// in this process's memory for the command's one retry, never printed or written.
enum PasswordPrompt {
    private static let typed = Mutex<String?>(nil)

    /// The password typed at the prompt, if one was.
    static var value: String? { typed.withLock { $0 } }

    /// Who logged in without a password on the command's first URL (`bob@host`),
    /// or nil when a password was given (URL, `FERRY_PASSWORD`, `~/.netrc`).
    static func loginWithoutPassword(_ args: ParsedArguments) -> (user: String?, host: String)? {
        guard let text = args.positionals.first(where: { $0.contains("://") }),
            let url = try? RemoteURL(parsing: text), url.scheme != .file, url.password == nil, value == nil
        else { return nil }
        let found = Credentials.resolve(for: url)
        guard (found?.password ?? "").isEmpty else { return nil }
        let user = found.flatMap { $0.isAnonymous ? nil : $0.user } ?? url.user
        return (user, url.host)
    }

    /// What to say when there is no terminal to ask on.
    static func hint(user: String?, host: String) -> String {
        if let user {
            return "no password was given for \(user)@\(host): set FERRY_PASSWORD, or add "
                + "'machine \(host) login \(user) password ...' to ~/.netrc (a terminal would be asked)."
        }
        return "no user and password were given for \(host): put them in the URL (ftp://USER@\(host)/), "
            + "FERRY_USER and FERRY_PASSWORD, or ~/.netrc."
    }

    /// Asks for the password on the terminal with echo off; nil without a
    /// terminal (stdin and stderr both) or when nothing was typed.
    static func ask(user: String, host: String) -> String? {
        guard isatty(0) != 0, isatty(2) != 0 else { return nil }
        var saved = termios()
        guard tcgetattr(0, &saved) == 0 else { return nil }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        let prompt = Array(Format.printable("Password for \(user)@\(host): ").utf8)
        _ = prompt.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        _ = tcsetattr(0, TCSAFLUSH, &quiet)
        let line = readLine(strippingNewline: true)
        _ = tcsetattr(0, TCSAFLUSH, &saved)
        _ = write(2, "\n", 1)
        guard let line, !line.isEmpty else { return nil }
        typed.withLock { $0 = line }
        return line
    }
}
