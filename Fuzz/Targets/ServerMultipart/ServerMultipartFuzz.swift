import Foundation
import FuzzSupport

// multipart/form-data upload bodies, fed whole and in chunks of varying size.
// Input: one seed byte for the chunk sizes, then the body (boundary `b0undary`).
// Small limits so the limit checks are reached.
@testable import FerryServer

let directory: String = {
    let path = NSTemporaryDirectory() + "/ferry-fuzz-multipart-\(getpid())"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}()
let limits = MultipartParser.Limits(maxPartHeaderSize: 64, maxFieldSize: 128, maxParts: 6)

/// What a parse gave, comparable across chunkings.
enum Outcome: Equatable {
    case parts([Part])
    case failed(MultipartError.Code)
}

struct Part: Equatable {
    var name: String?
    var filename: String?
    var contentType: String?
    var isFile: Bool
    var bytes: Data
}

func parse(_ body: UnsafeBufferPointer<UInt8>, chunkSeed: UInt8?) -> Outcome {
    let parser = try! MultipartParser(boundary: "b0undary", directory: directory, limits: limits)
    var offset = 0
    var state = UInt32(chunkSeed ?? 0) | 1
    do throws(MultipartError) {
        while offset < body.count {
            var n = body.count - offset
            if chunkSeed != nil {
                state = state &* 1_103_515_245 &+ 12345
                n = min(n, 1 + Int((state >> 16) % 40))
            }
            try parser.feed(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: body[offset..<(offset + n)])))
            offset += n
        }
        let parts = try parser.finish()
        return .parts(
            parts.map { part in
                var bytes = Data()
                var isFile = false
                switch part.content {
                case .data(let data): bytes = data
                case .file(let path, let size):
                    isFile = true
                    bytes = readFile(path)
                    require(Int64(bytes.count) == size, "file size \(size) but \(bytes.count) bytes")
                    unlink(path)
                }
                return Part(
                    name: part.name, filename: part.filename, contentType: part.contentType, isFile: isFile,
                    bytes: bytes)
            })
    } catch {
        return .failed(error.code)
    }
}

/// The file's bytes. (Not `FileManager.contents(atPath:)`: FoundationEssentials
/// leaks its 4 KiB buffer for an empty file, which LeakSanitizer reports.)
func readFile(_ path: String) -> Data {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return Data() }
    defer { close(fd) }
    var out = Data()
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = read(fd, &chunk, chunk.count)
        if n <= 0 { break }
        out.append(contentsOf: chunk[..<n])
    }
    return out
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let all = bytes(data, size)
    guard let seed = all.first else { return 0 }
    let body = UnsafeBufferPointer(rebasing: all[1...])
    let whole = parse(body, chunkSeed: nil)
    let chunked = parse(body, chunkSeed: seed)
    require(whole == chunked, "chunking changed the outcome: \(whole) vs \(chunked)")
    if case .parts(let parts) = whole {
        require(parts.count <= limits.maxParts, "too many parts")
        for part in parts where !part.isFile { require(part.bytes.count <= limits.maxFieldSize, "field too large") }
    }
    let left = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    require(left.isEmpty, "temporary files left behind: \(left)")
    return 0
}
