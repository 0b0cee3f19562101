// Requests to `ferry serve`'s JSON API and page files over a local folder with
// symbolic links leading in and out. Input: METHOD SP TARGET, LF, then a JSON body.
// Nothing outside the folder may be read, listed, written or deleted.
import Dispatch
import FerryKit
import Foundation
import FuzzSupport

@testable import FerryServer
@testable import FerryWeb

let base = NSTemporaryDirectory() + "/ferry-fuzz-web-\(getpid())"
let outside = base + "/outside"
let root = base + "/root"
let secret = "FUZZ-WEB-OUTSIDE-SECRET"

func makeRoot() {
    let fm = FileManager.default
    try? fm.removeItem(atPath: root)
    try! fm.createDirectory(atPath: root + "/DCIM/100FERRY", withIntermediateDirectories: true)
    let pixels = [UInt8](repeating: 0x80, count: 16 * 16 * 3)
    let jpeg = try! JPEGCodec.encode(RGBImage(width: 16, height: 16, pixels: pixels))
    _ = fm.createFile(atPath: root + "/DCIM/100FERRY/A.JPG", contents: Data(jpeg))
    _ = fm.createFile(atPath: root + "/DCIM/100FERRY/B.TXT", contents: Data("inside".utf8))
    symlink("../outside", root + "/link-out")
    symlink("../outside/secret.jpg", root + "/link-file.jpg")
    symlink(outside, root + "/DCIM/abs-out")
    symlink("100FERRY", root + "/DCIM/inside")
    symlink("nowhere", root + "/dangling")
}

let api: WebAPI = {
    let fm = FileManager.default
    try! fm.createDirectory(atPath: outside + "/victims", withIntermediateDirectories: true)
    _ = fm.createFile(atPath: outside + "/secret.jpg", contents: Data(secret.utf8))
    makeRoot()
    var configuration = WebConfiguration(source: try! RemoteURL(parsing: "file://" + root))
    configuration.cacheDirectory = base + "/cache"
    return try! WebAPI(configuration: configuration)
}()

let realRoot = WebSource.realPath(root)!

func outsideIsIntact() -> Bool {
    let fm = FileManager.default
    return (try? fm.contentsOfDirectory(atPath: base).sorted()) == ["cache", "outside", "root"]
        && (try? fm.contentsOfDirectory(atPath: outside).sorted()) == ["secret.jpg", "victims"]
        && (try? fm.contentsOfDirectory(atPath: outside + "/victims")) == []
        && fm.contents(atPath: outside + "/secret.jpg") == Data(secret.utf8)
}

final class Answer: @unchecked Sendable {
    // Safe: written by the task before it signals `done`, read after `wait()`.
    var response: HTTPResponse?
    let done = DispatchSemaphore(value: 0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let api = api
    let input = text(data, size)
    let firstLine = input.prefix { $0 != "\n" }
    let body = input.dropFirst(firstLine.count + 1)
    let parts = firstLine.split(separator: " ", maxSplits: 1)
    let method = parts.count == 2 ? String(parts[0]) : "GET"
    let target = String(parts.last ?? "/")
    guard !URLTarget.split(target).path.contains("%00") else { return 0 }  // the server answers 400 first
    let headers: HTTPHeaders = [
        "Host": "127.0.0.1:8080", "Origin": "http://127.0.0.1:8080", "Content-Type": "application/json",
    ]
    let request = HTTPRequest(
        method: method, target: target, headers: headers, body: body.isEmpty ? .none : .data(Data(body.utf8)))
    let answer = Answer()
    Task {
        answer.response = await api.handle(request)
        answer.done.signal()
    }
    answer.done.wait()
    let response = answer.response!
    require((100...599).contains(response.status), "status \(response.status)")
    switch response.body {
    case .file(let path, _):
        let real = WebSource.realPath(path) ?? path
        require(
            real.utf8.starts(with: (realRoot + "/").utf8) || real.utf8.starts(with: (api.assets.folder + "/").utf8),
            "serves \(path) from outside the root")
    case .data(let data):
        let text = String(decoding: data, as: UTF8.self)
        require(!text.contains(secret), "leaked the secret")
        if (200..<300).contains(response.status) {
            require(!text.contains("secret.jpg") && !text.contains("victims"), "listed outside: \(text)")
        }
    case .text(let text):
        require(!text.contains(secret), "leaked the secret")
        if (200..<300).contains(response.status) {
            require(!text.contains("secret.jpg") && !text.contains("victims"), "listed outside: \(text)")
        }
    case .empty:
        break
    }
    require(outsideIsIntact(), "something outside the root changed after \(method) \(target)")
    if method != "GET" && method != "HEAD" { makeRoot() }
    return 0
}
