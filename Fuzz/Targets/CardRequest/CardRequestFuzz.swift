import FerryKit
import Foundation
import FuzzSupport

// Request targets (and an optional Range header) sent to `ferry card`'s handler:
// command.cgi, upload.cgi's GET commands, thumbnail.cgi, config.cgi and plain
// downloads, against a card folder with symbolic links leading in and out.
// Input: TARGET [NUL RANGE-HEADER]. Nothing outside the card may be read,
// listed, written or deleted.
@testable import FerryCard
@testable import FerryServer

let base = NSTemporaryDirectory() + "/ferry-fuzz-card-\(getpid())"
let outside = base + "/outside"
let cardFolder = base + "/card"
let secret = "FUZZ-OUTSIDE-SECRET"

func makeCard() {
    let fm = FileManager.default
    try? fm.removeItem(atPath: cardFolder)
    try! fm.createDirectory(atPath: cardFolder + "/DCIM/100__TSB", withIntermediateDirectories: true)
    _ = fm.createFile(atPath: cardFolder + "/DCIM/100__TSB/A.JPG", contents: Data("inside".utf8))
    _ = fm.createFile(atPath: cardFolder + "/DCIM/100__TSB/B.TXT", contents: Data("inside too".utf8))
    symlink("../outside", cardFolder + "/link-out")
    symlink("../outside/secret.txt", cardFolder + "/link-file")
    symlink(outside, cardFolder + "/DCIM/abs-out")
    symlink("100__TSB", cardFolder + "/DCIM/inside")
    symlink("nowhere", cardFolder + "/dangling")
}

let setUp: Void = {
    try! FileManager.default.createDirectory(atPath: outside + "/victims", withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: outside + "/secret.txt", contents: Data(secret.utf8))
    makeCard()
}()

let realCard = CardRoot.realPath(cardFolder)!

func outsideIsIntact() -> Bool {
    let fm = FileManager.default
    return (try? fm.contentsOfDirectory(atPath: base).sorted()) == ["card", "outside"]
        && (try? fm.contentsOfDirectory(atPath: outside).sorted()) == ["secret.txt", "victims"]
        && (try? fm.contentsOfDirectory(atPath: outside + "/victims")) == []
        && fm.contents(atPath: outside + "/secret.txt") == Data(secret.utf8)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    _ = setUp
    let (first, rest) = splitAtNUL(data, size)
    let target = first ?? rest
    var headers: FerryServer.HTTPHeaders = [:]
    if first != nil { headers.add(name: "Range", value: rest) }
    // The server answers 400 to a NUL in the path before any handler runs.
    guard !URLTarget.split(target).path.contains("%00") else { return 0 }
    let handler = CardHandler(root: try! CardRoot(cardFolder), configuration: FlashAirCardConfiguration())
    let response = handler.handle(HTTPRequest(method: "GET", target: target, headers: headers))
    require((100...599).contains(response.status), "status \(response.status)")
    switch response.body {
    case .file(let path, _):
        let real = CardRoot.realPath(path) ?? path
        require(real.utf8.starts(with: (realCard + "/").utf8), "serves \(path) from outside the card")
    case .data(let body):
        require(!String(decoding: body, as: UTF8.self).contains(secret), "leaked the secret")
    case .text(let body):
        require(!body.contains(secret), "leaked the secret")
        require(!body.contains("secret.txt") && !body.contains("victims"), "listed outside: \(body)")
    case .empty:
        break
    }
    require(outsideIsIntact(), "something outside the card changed after \(target)")
    if target.contains("upload.cgi") { makeCard() }
    return 0
}
