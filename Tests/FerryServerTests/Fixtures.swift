import FerryServer
import FerryTestSupport
import Foundation

/// Starts a server on 127.0.0.1 with a free port, runs `body`, stops it.
@discardableResult
func withServer<T>(
    options: HTTPServer.Options = HTTPServer.Options(),
    host: String = "127.0.0.1",
    handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse,
    _ body: (HTTPServer) async throws -> T
) async throws -> T {
    try await TestGate.run {
        let server = HTTPServer(host: host, port: 0, options: options, handler: handler)
        try server.start()
        defer { server.stop() }
        return try await body(server)
    }
}

/// A scratch folder under the system temporary folder, removed by `remove()`.
struct ScratchDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "ferry-server-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { "\(path)/\(name)" }

    /// Writes `size` pseudo-random bytes in 1 MiB steps (never the whole file in memory).
    @discardableResult
    func makeFile(_ name: String, size: Int, seed: UInt64 = 1) throws -> String {
        let path = file(name)
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var generator = SeededRandom(seed: seed)
        var remaining = size
        while remaining > 0 {
            let count = min(remaining, 1 << 20)
            var chunk = Data(count: count)
            chunk.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) in
                for i in 0..<count { raw[i] = UInt8(truncatingIfNeeded: generator.next()) }
            }
            try handle.write(contentsOf: chunk)
            remaining -= count
        }
        return path
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Whether two files have the same bytes (compared in 1 MiB blocks).
func filesEqual(_ a: String, _ b: String) throws -> Bool {
    let x = try FileHandle(forReadingFrom: URL(fileURLWithPath: a))
    let y = try FileHandle(forReadingFrom: URL(fileURLWithPath: b))
    defer {
        try? x.close()
        try? y.close()
    }
    while true {
        let p = try x.read(upToCount: 1 << 20) ?? Data()
        let q = try y.read(upToCount: 1 << 20) ?? Data()
        if p != q { return false }
        if p.isEmpty { return true }
    }
}

/// Echoes what the server parsed, one `key=value` per line.
@Sendable func echoHandler(_ request: HTTPRequest) async -> HTTPResponse {
    var lines = [
        "method=\(request.method)",
        "target=\(request.target)",
        "rawPath=\(request.rawPath)",
        "path=\(request.path)",
        "rawQuery=\(request.rawQuery ?? "<nil>")",
        "remote=\(request.remoteAddress ?? "<nil>")",
    ]
    for item in request.queryItems { lines.append("item=\(item.name)|\(item.value ?? "<nil>")") }
    lines.append("x-test=\(request.headers["x-TEST"] ?? "<nil>")")
    switch request.body {
    case .none: lines.append("body=none")
    case .data(let data): lines.append("body=data:\(data.count)")
    case .file(_, let size): lines.append("body=file:\(size)")
    case .multipart(let parts): lines.append("body=multipart:\(parts.count)")
    }
    return .text(lines.joined(separator: "\n") + "\n")
}

/// Answers `ok` to everything.
@Sendable func okHandler(_: HTTPRequest) async -> HTTPResponse {
    .text("ok")
}
