import Foundation

/// The outcome of a finished child process.
struct ProcessResult: Sendable {
    var exitCode: Int32
    var stdout: Data
    var stderr: String

    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
}

/// Runs `executable` with `arguments` without blocking a cooperative thread
/// (the server's handlers need those): output goes to temporary files and
/// the termination handler resumes the caller.
func run(_ executable: String, _ arguments: [String]) async throws -> ProcessResult {
    let directory = FileManager.default.temporaryDirectory
    let outURL = directory.appendingPathComponent("ferry-test-\(UUID().uuidString).out")
    let errURL = directory.appendingPathComponent("ferry-test-\(UUID().uuidString).err")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    defer {
        try? FileManager.default.removeItem(at: outURL)
        try? FileManager.default.removeItem(at: errURL)
    }
    let out = try FileHandle(forWritingTo: outURL)
    let err = try FileHandle(forWritingTo: errURL)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    let code: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { process in
            continuation.resume(returning: process.terminationStatus)
        }
        do {
            try process.run()
        } catch {
            process.terminationHandler = nil
            continuation.resume(throwing: error)
        }
    }
    try out.close()
    try err.close()
    return ProcessResult(
        exitCode: code, stdout: try Data(contentsOf: outURL),
        stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
}

/// Runs `curl -sS` plus `arguments`.
func curl(_ arguments: [String]) async throws -> ProcessResult {
    try await run("/usr/bin/curl", ["-sS", "--max-time", "60"] + arguments)
}
