import CCurl
import Foundation

/// One complete FTP server reply ("550 No such file or directory."), with the
/// command it answered.
struct FTPReply: Sendable, Hashable {
    /// The three-digit reply code.
    var code: Int
    /// The text of the final line, after the code.
    var text: String
    /// Every line of the reply, multi-line replies included (`211-Features:` ...).
    var lines: [String]
    /// The command this reply answered ("FEAT", "DELE /pub/a"), or nil for the
    /// greeting. `PASS` is recorded without its argument.
    let command: String?
    /// The command's verb, uppercased ("DELE"). Stored, not computed: every
    /// `lastReply(verb:)` compares it for each reply, and a download asks for
    /// its `SIZE` reply on every chunk it receives (computed, a large share of
    /// a `get -r` of an FTP tree: bench/RESULTS.md, "The 500-file FTP tree, and 1,000 files over HTTP").
    let verb: String?

    init(code: Int, text: String, lines: [String], command: String?) {
        self.code = code
        self.text = text
        self.lines = lines
        self.command = command
        verb = command.map { String($0.prefix { $0 != " " }).uppercased() }
    }

    var isFailure: Bool { code >= 400 }
}

/// Collects the replies and commands of one libcurl FTP job from its debug
/// callback (`CURLINFO_HEADER_IN` carries server replies, `CURLINFO_HEADER_OUT`
/// the commands libcurl sent).
///
/// Used only on the engine thread while the job runs, and read by the awaiting
/// task after the job completed.
struct FTPReplyLog: Sendable {
    /// Complete replies, in order.
    private(set) var replies: [FTPReply] = []
    private var pending: [String] = []
    private var partialLine: [UInt8] = []
    private var lastCommand: String?
    /// Set when a reply cannot be the answer to the command it follows (a `213`
    /// after `EPSV`): the control connection is a reply behind, and every command
    /// on it would read the answer to the one before. libcurl keeps a connection
    /// after some such errors ("Bad PASV/EPSV response"), so a retry would meet
    /// it again; the job then forbids its reuse.
    private(set) var outOfStep = false
    /// Set when the server answered the connection itself, or the login, with
    /// `421` ("too many connections from this address", "too many users").
    private(set) var refusedAtLogin = false

    /// Feeds what libcurl's debug callback reports: server replies and the
    /// commands it sent.
    mutating func consume(_ type: curl_infotype, _ text: UnsafeRawBufferPointer) {
        if type == CURLINFO_HEADER_IN {
            consumeIncoming(text)
        } else if type == CURLINFO_HEADER_OUT {
            consumeOutgoing(String(decoding: text, as: UTF8.self))
        }
    }

    /// The only positive replies some commands can get; any other 1xx-3xx reply
    /// answered an earlier command.
    static func positiveReplies(to verb: String) -> Set<Int>? {
        switch verb {
        case "EPSV": [229]
        case "PASV": [227]
        case "SIZE", "MDTM": [213]
        default: nil
        }
    }

    /// Feeds server text: one or more lines, possibly ending in a partial line.
    mutating func consumeIncoming(_ bytes: UnsafeRawBufferPointer) {
        for b in bytes {
            if b == UInt8(ascii: "\n") {
                var line = partialLine
                partialLine.removeAll(keepingCapacity: true)
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                if !line.isEmpty { consumeLine(String(decoding: line, as: UTF8.self)) }
            } else {
                partialLine.append(b)
            }
        }
    }

    /// Feeds server text as a string (tests).
    mutating func consumeIncoming(_ text: String) {
        var t = text
        t.withUTF8 { consumeIncoming(UnsafeRawBufferPointer($0)) }
    }

    private mutating func consumeLine(_ line: String) {
        pending.append(line)
        guard let code = FTPReplyLog.finalCode(line) else { return }
        let reply = FTPReply(
            code: code, text: FTPReplyLog.trimmed(line.dropFirst(4)), lines: pending, command: lastCommand)
        if code < 400, let verb = reply.verb, let allowed = FTPReplyLog.positiveReplies(to: verb),
            !allowed.contains(code)
        {
            outOfStep = true
        }
        if code == 421, [nil, "USER", "PASS"].contains(reply.verb) { refusedAtLogin = true }
        replies.append(reply)
        pending = []
    }

    /// Feeds a command libcurl sent.
    mutating func consumeOutgoing(_ text: String) {
        // Only the line end goes: a name may end (or start) with spaces, and the
        // reply to "DELE /a " is looked up by the command as it was sent.
        var line = Substring(text)
        while let last = line.last, last.isNewline { line.removeLast() }
        guard !line.isEmpty else { return }
        // Never keep a password, not even in memory longer than needed.
        if line.uppercased().hasPrefix("PASS") {
            lastCommand = "PASS"
        } else {
            lastCommand = String(line)
        }
    }

    /// `text` without leading and trailing spaces and tabs (what
    /// `trimmingCharacters(in: .whitespaces)` removes: tab and the Unicode space
    /// separators), without Foundation's `NSString` round trip, which cost more
    /// than the rest of reading a reply.
    static func trimmed(_ text: Substring) -> String {
        func isSpace(_ c: Character) -> Bool {
            c.unicodeScalars.allSatisfy { $0 == "\t" || $0.properties.generalCategory == .spaceSeparator }
        }
        guard let first = text.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = text.lastIndex(where: { !isSpace($0) })!
        return String(text[first...last])
    }

    /// The code of a reply's final line: three digits then a space (or nothing).
    static func finalCode(_ line: String) -> Int? {
        let u = Array(line.utf8.prefix(4))
        guard u.count >= 3, u[0...2].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        if u.count == 4 && u[3] != UInt8(ascii: " ") { return nil }
        return Int(String(decoding: u[0...2], as: UTF8.self))
    }

    /// The first reply to a command (matched exactly, without a leading `*`).
    func reply(to command: String) -> FTPReply? {
        let c = command.hasPrefix("*") ? String(command.dropFirst()) : command
        return replies.first { $0.command == c }
    }

    /// The path in a `257` reply (`"/home/ann" is the current directory`), with
    /// RFC 959's doubled quotes undone; nil without a quoted path.
    static func quotedPath(_ text: String) -> String? {
        guard let open = text.firstIndex(of: "\"") else { return nil }
        var path = ""
        var rest = text[text.index(after: open)...]
        while let c = rest.first {
            rest = rest.dropFirst()
            if c == "\"" {
                guard rest.first == "\"" else { return path.isEmpty ? nil : path }
                rest = rest.dropFirst()
            }
            path.append(c)
        }
        return nil
    }

    /// The last reply whose command starts with `verb`.
    func lastReply(verb: String) -> FTPReply? {
        replies.last { $0.verb == verb }
    }

    /// The reply that best explains a failed job: the last error reply, except
    /// ones libcurl recovers from by itself (EPSV refused falls back to PASV;
    /// `AUTH SSL` refused falls back to `AUTH TLS`, pure-ftpd's "500 This security
    /// scheme is not implemented") and the goodbye of a closing connection.
    var failure: FTPReply? {
        replies.last { r in
            guard r.isFailure else { return false }
            switch r.verb {
            case "EPSV", "EPRT", "QUIT", "FEAT", "OPTS": return false
            case "AUTH" where r.command?.uppercased() == "AUTH SSL": return false
            default: return true
            }
        }
    }
}

extension FerryError {
    /// Maps an FTP error reply (4xx, 5xx) to a Ferry error that keeps the server's
    /// code and text.
    static func ftp(_ reply: FTPReply, operation: String, target: String) -> FerryError {
        let text = reply.text
        let lower = LowercaseASCII(text)
        var code: Code = .serverError
        var transient = false
        var detail: String?
        if reply.code >= 400, wantsTLS(lower) {
            // vsftpd: "530 Non-anonymous sessions must use encryption.", proftpd:
            // "550 SSL/TLS required on the control channel", pure-ftpd: "421 Please
            // reconnect using TLS security mechanisms.": not a wrong password.
            return FerryError(
                .tls, operation: operation, target: target, serverCode: reply.code, serverText: text,
                detail: "the server wants TLS: use ftpes:// (or ftps:// for implicit TLS)")
        }
        switch reply.code {
        case 530:
            code = .authenticationFailed
            detail = "check the user and password"
        case 421, 425, 426, 450, 451, 452:
            // Service closing, data connection trouble, file busy, local error,
            // no room right now: RFC 959 calls these transient.
            code = reply.code == 425 || reply.code == 426 || reply.code == 421 ? .connectionFailed : .serverError
            transient = true
        case 550, 553:
            code = classify550(lower)
        case 552:
            code = .serverError
            detail = "the server has no room for the file"
        case 500, 501, 502, 504:
            code = reply.code == 502 || reply.code == 504 ? .unsupportedOperation : .protocolError
        case 532:
            code = .authenticationFailed
        default:
            code = .serverError
        }
        return FerryError(
            code, operation: operation, target: target, serverCode: reply.code, serverText: text, detail: detail,
            isTransient: transient)
    }

    /// Whether a refusal says the server talks only over TLS.
    static func wantsTLS(_ lower: LowercaseASCII) -> Bool {
        let phrases = [
            "must use encryption", "ssl/tls required", "tls required", "ssl required", "cleartext sessions",
            "requires tls", "requires ssl", "use auth tls", "policy requires ssl", "encryption required",
            "reconnect using tls",
        ]
        return phrases.contains(where: lower.contains)
    }

    /// A 550 ("requested action not taken") means many things; the text tells which.
    static func classify550(_ lower: LowercaseASCII) -> Code {
        let denied = [
            "denied", "permission", "not allowed", "privilege", "forbidden", "refused", "read-only",
            "read only", "not permitted",
        ]
        if denied.contains(where: lower.contains) { return .permissionDenied }
        if lower.contains("not empty") { return .directoryNotEmpty }
        if lower.contains("file exists") || lower.contains("already exists") { return .destinationExists }
        return .notFound
    }

    /// The error for a finished FTP job: cancelled, the server's own reply, or
    /// libcurl's view when the server said nothing useful (TLS, timeouts, resets).
    static func ftp(
        _ completion: CurlCompletion, log: FTPReplyLog, operation: String, target: String
    ) -> FerryError {
        if completion.interrupted { return FerryError(.cancelled, operation: operation, target: target) }
        switch completion.code {
        case .peerFailedVerification, .sslConnectError, .useSSLFailed, .couldntConnect, .couldntResolveHost:
            return .curl(completion, operation: operation, target: target)
        default:
            break
        }
        if let reply = log.failure { return .ftp(reply, operation: operation, target: target) }
        return .curl(completion, operation: operation, target: target)
    }
}

extension CurlJob {
    /// What every FTP job does with libcurl's debug output: log the replies,
    /// stop reusing a connection that is a reply behind, and tell the engine when
    /// the server refused a connection for being one too many.
    func followFTP(_ log: inout FTPReplyLog, _ type: curl_infotype, _ text: UnsafeRawBufferPointer) {
        let before = log.replies.count
        log.consume(type, text)
        // libcurl 7.88 that reads the PASV/EPSV reply in the same call that sent
        // the command sets up the data connection but neither opens it nor sets a
        // timer ("sit down, relax and wait a little while"), so curl_multi_poll
        // slept its full second before the connect: every other listing on a
        // reused connection to a fast server took a second longer.
        if log.replies[before...].contains(where: { $0.code == 227 || $0.code == 229 }) { performAgain = true }
        if log.outOfStep { easy.set(CURLOPT_FORBID_REUSE, 1) }
        if log.refusedAtLogin { refusedForTooManyConnections = true }
    }
}

/// A reply's text with ASCII letters lower-cased, searched for ASCII phrases byte by
/// byte. A refused reply is checked against some 20 phrases, and with Foundation's
/// `String.contains(_:)` a `put` of many small files to pyftpdlib spent a large share
/// of its instructions here (bench/RESULTS.md, "Issue 19, fifth step (2026-12-01): five
/// branches on the per-file cost, merged").
struct LowercaseASCII {
    private let bytes: [UInt8]

    init(_ text: String) {
        bytes = text.utf8.map(\.asciiLowercased)
    }

    /// Whether `phrase` (lower-case ASCII) occurs in the text.
    func contains(_ phrase: String) -> Bool {
        let needle = Array(phrase.utf8)
        guard !needle.isEmpty else { return true }
        guard needle.count <= bytes.count else { return false }
        let first = needle[0]
        var i = 0
        let last = bytes.count - needle.count
        while i <= last {
            if bytes[i] == first {
                var j = 1
                while j < needle.count && bytes[i + j] == needle[j] { j += 1 }
                if j == needle.count { return true }
            }
            i += 1
        }
        return false
    }
}
