// What an FTP server says back (greeting, multi-line FEAT, error replies), fed to
// the reply log in pieces between the commands libcurl sends, PASS included; and
// the paths Ferry turns into FTP command arguments.
// Input: one seed byte for the piece sizes, then the server's bytes.
import FuzzSupport

@testable import FerryKit

let password = "Fuzz-S3cret-Pw"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let all = bytes(data, size)
    guard let seed = all.first else { return 0 }
    let incoming = UnsafeBufferPointer(rebasing: all[1...])
    let serverText = String(decoding: incoming, as: UTF8.self)
    var log = FTPReplyLog()
    let commands = ["USER ferry", "PASS " + password, "PWD", "FEAT", "TYPE I", "EPSV", "SIZE /pub/a", "RETR /pub/a"]
    var offset = 0
    var state = UInt32(seed) | 1
    var next = 0
    while offset < incoming.count {
        state = state &* 1_103_515_245 &+ 12345
        let n = min(incoming.count - offset, 1 + Int((state >> 16) % 64))
        log.consumeIncoming(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: incoming[offset..<(offset + n)])))
        offset += n
        if (state >> 8) & 1 == 1 {
            log.consumeOutgoing(commands[next % commands.count])
            next += 1
        }
    }
    let echoed = serverText.contains(password)
    for reply in log.replies {
        require((0...999).contains(reply.code), "code \(reply.code)")
        require(!(reply.command ?? "").contains(password), "PASS argument kept: \(reply.command ?? "")")
        if !echoed {
            // Line by line: the server may send the password's pieces on two lines
            // (found by this fuzzer: "Fu\r\nzz-S3cret-Pw" glued back by `joined()`).
            require(!reply.lines.contains { $0.contains(password) }, "password in reply lines")
            let error = FerryError.ftp(reply, operation: "list", target: "/pub")
            require(!"\(error)".contains(password), "password in an error: \(error)")
        }
    }
    if let failure = log.failure { require(failure.isFailure, "failure that is not one") }
    for reply in log.replies where reply.code == 211 {
        for feature in FTPServerInfo.features(fromFEAT: reply) {
            require(!feature.isEmpty && feature == feature.uppercased(), "feature \(feature)")
        }
    }
    // Paths from a listing or a user, made into command arguments.
    for path in serverText.split(separator: "\n").prefix(4).map(String.init) {
        let normalized = RemotePath.normalize(path)
        require(normalized.utf8.first == UInt8(ascii: "/"), "normalize: \(normalized)")
        _ = RemotePath.parent(of: path)
        _ = RemotePath.name(of: path)
        let argument = FTPEndpoint.serverPath(path, entryPath: "/home/ferry")
        if (try? FTPEndpoint.validate(path, operation: "list", display: path)) != nil {
            require(!argument.utf8.contains(0x0D) && !argument.utf8.contains(0x0A), "line break passed to a command")
            require(!argument.utf8.contains(0), "NUL passed to a command")
        }
    }
    return 0
}
