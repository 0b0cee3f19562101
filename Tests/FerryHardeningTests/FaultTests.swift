import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// Transfers through `ChaosProxy`, which resets, truncates, stalls or cuts the
/// request of half the connections at a random byte: every file ends
/// byte-identical, or the transfer fails with an error and leaves a `.part` that
/// a later fault-free run resumes into the right file. Never a wrong file under
/// its final name.
///
/// CI runs 24 downloads and 6 uploads per server; `FERRY_FAULTS=full` runs the
/// issue's 200 and 50, and `FERRY_FAULTS_REPORT=FILE` appends the figures
/// (docs/RELIABILITY.md).
@Suite(.serialized)
struct FaultTests {
    static let full = ProcessInfo.processInfo.environment["FERRY_FAULTS"] == "full"
    static let downloads = full ? 200 : 24
    static let uploads = full ? 50 : 6

    static func sizes(_ count: Int, seed: UInt64) -> [Int] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return 1000 + Int((state >> 33) % 600_000)
        }
    }

    static var downloadOptions: DownloadOptions {
        var o = DownloadOptions()
        o.maxRetries = 12
        o.retryDelay = .milliseconds(20)
        o.stallTimeout = .seconds(1)
        o.connectTimeout = .seconds(2)
        return o
    }

    struct Tally: CustomStringConvertible {
        var ok = 0
        var failed: [String: Int] = [:]
        var retries = 0
        var resumedLater = 0
        /// Failures that left a `.part`, and reruns that went on from one.
        var failedWithPart = 0
        var resumedFromPart = 0
        /// The longest a download took (a hang shows here).
        var slowest = Duration.zero
        var description: String {
            "\(ok) byte-identical, \(failed.values.reduce(0, +)) failed \(failed.sorted { $0.key < $1.key }) "
                + "(\(failedWithPart) with a .part), \(retries) retries, \(resumedLater) resumed without faults "
                + "afterwards (\(resumedFromPart) from their .part), slowest "
                + slowest.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1)))
        }
    }

    static func report(_ line: String) {
        guard let path = ProcessInfo.processInfo.environment["FERRY_FAULTS_REPORT"] else { return }
        let handle =
            FileHandle(forWritingAtPath: path)
            ?? {
                _ = FileManager.default.createFile(atPath: path, contents: nil)
                return FileHandle(forWritingAtPath: path)!
            }()
        handle.seekToEndOfFile()
        handle.write(Data((line + "\n").utf8))
        try? handle.close()
    }

    /// Downloads every name through `through`, checks each outcome, then resumes the
    /// failures through `direct` (no faults).
    static func downloadAll(
        _ names: [String], expected: [String: Data], through: any RemoteFileSystem, direct: any RemoteFileSystem,
        into folder: String, parallel: Int
    ) async throws -> Tally {
        var (tally, failures) = await download(
            names, expected: expected, through: through, into: folder, parallel: parallel)
        try await resume(failures, expected: expected, from: direct, into: folder, tally: &tally)
        return tally
    }

    /// Downloads every name through `through`, `parallel` at a time, and checks each
    /// outcome: byte-identical, or an error and nothing under the final name.
    /// Returns the tally and the names that failed.
    static func download(
        _ names: [String], expected: [String: Data], through: any RemoteFileSystem, into folder: String,
        parallel: Int, options: DownloadOptions = downloadOptions
    ) async -> (Tally, [String]) {
        var tally = Tally()
        var failures: [String] = []
        var index = 0
        while index < names.count {
            let batch = names[index..<min(names.count, index + parallel)]
            index += batch.count
            let outcomes = await withTaskGroup(of: (String, Result<TransferResult, FerryError>, Duration).self) {
                group in
                for name in batch {
                    group.addTask {
                        let started = ContinuousClock.now
                        let t = through.download("/" + name, to: folder + "/" + name, options: options)
                        do throws(FerryError) {
                            return (name, .success(try await t.result), .now - started)
                        } catch {
                            return (name, .failure(error), .now - started)
                        }
                    }
                }
                var all: [(String, Result<TransferResult, FerryError>, Duration)] = []
                for await o in group { all.append(o) }
                return all
            }
            for (name, outcome, took) in outcomes {
                tally.slowest = max(tally.slowest, took)
                let final = folder + "/" + name
                switch outcome {
                case .success(let r):
                    #expect(FileManager.default.contents(atPath: final) == expected[name], "\(name) differs")
                    tally.ok += 1
                    tally.retries += r.retries
                case .failure(let e):
                    // A failure never leaves a file under the final name.
                    #expect(!FileManager.default.fileExists(atPath: final), "\(name) failed but exists: \(e)")
                    tally.failed["\(e.code)", default: 0] += 1
                    if LocalFile.size(atPath: final + ".part") ?? 0 > 0 { tally.failedWithPart += 1 }
                    failures.append(name)
                }
            }
        }
        return (tally, failures)
    }

    /// Downloads the failures again from `source`, which has no faults, and checks
    /// that each ends byte-identical.
    ///
    /// A `.part` is resumed only from the source it came from (its journal names the
    /// URL, port included). With `expectResume`, `source` is that source with its
    /// faults switched off, and every rerun must go on from the `.part` its failure
    /// left instead of starting over.
    static func resume(
        _ failures: [String], expected: [String: Data], from source: any RemoteFileSystem, into folder: String,
        tally: inout Tally, expectResume: Bool = false
    ) async throws {
        for name in failures {
            let final = folder + "/" + name
            let part = LocalFile.size(atPath: final + ".part") ?? 0
            let r = try await source.download("/" + name, to: final, options: downloadOptions).result
            #expect(FileManager.default.contents(atPath: final) == expected[name], "\(name) resumed wrong")
            tally.resumedLater += 1
            if r.resumedFrom > 0 { tally.resumedFromPart += 1 }
            if expectResume && part > 0 {
                #expect(r.resumedFrom > 0, "\(name): the rerun started over instead of resuming its \(part)-byte .part")
            }
        }
    }

    @Test func httpDownloadsThroughFaults() async throws {
        let dir = try TempDir(prefix: "faults-http")
        try FileManager.default.createDirectory(atPath: dir.file("www"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.file("out"), withIntermediateDirectories: true)
        var expected: [String: Data] = [:]
        let names = Self.sizes(Self.downloads, seed: 3).enumerated().map { i, size in
            let name = "f\(i).bin"
            expected[name] = try! TestData.file(dir.file("www/" + name), size: size, seed: UInt64(i))
            return name
        }
        let nginx = try NginxServer(root: dir.file("www"))
        let proxy = try ChaosProxy(upstreamPort: nginx.port, seed: 11, maxOffset: 600_000)
        let through = HTTPFileSystem(url: try RemoteURL(parsing: "http://127.0.0.1:\(proxy.port)/"))
        let direct = HTTPFileSystem(url: try RemoteURL(parsing: nginx.url("/")))
        let tally = try await Self.downloadAll(
            names, expected: expected, through: through, direct: direct, into: dir.file("out"), parallel: 8)
        Self.report("HTTP (nginx), \(names.count) downloads, faults \(ChaosProxy.describe(proxy.counts)): \(tally)")
        #expect(tally.ok + tally.resumedLater == names.count)
    }

    @Test func cardDownloadsAndUploadsThroughFaults() async throws {
        let dir = try TempDir(prefix: "faults-card")
        let card = dir.file("card")
        try FileManager.default.createDirectory(atPath: card + "/DCIM/100__TSB", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: card + "/UP", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.file("out"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.file("local"), withIntermediateDirectories: true)
        var expected: [String: Data] = [:]
        let names = Self.sizes(Self.downloads, seed: 5).enumerated().map { i, size in
            let name = "DCIM/100__TSB/IMG_\(1000 + i).JPG"
            expected[name] = try! TestData.file(card + "/" + name, size: size, seed: UInt64(100 + i))
            return name
        }
        let process = try FerryCardProcess(folder: card)
        let proxy = try ChaosProxy(upstreamPort: process.port, seed: 13, maxOffset: 600_000)
        var policy = FlashAirFileSystem.RequestPolicy()
        policy.tries = 12
        policy.retryDelay = .milliseconds(20)
        policy.stallTimeout = .seconds(1)
        policy.connectTimeout = .seconds(2)
        let through = FlashAirFileSystem(
            url: try RemoteURL(parsing: "flashair://127.0.0.1:\(proxy.port)/"), policy: policy)
        let direct = FlashAirFileSystem(url: try RemoteURL(parsing: process.url("/")), policy: policy)
        try FileManager.default.createDirectory(
            atPath: dir.file("out/DCIM/100__TSB"), withIntermediateDirectories: true)
        let tally = try await Self.downloadAll(
            names, expected: expected, through: through, direct: direct, into: dir.file("out"), parallel: 1)
        Self.report(
            "FlashAir (ferry card), \(names.count) downloads, faults \(ChaosProxy.describe(proxy.counts)): \(tally)")
        #expect(tally.ok + tally.resumedLater == names.count)

        // Uploads: each ends byte-identical on the card, or fails with nothing (or the
        // previous good copy) under its name; a second, fault-free run completes them.
        var uploadOptions = UploadOptions()
        uploadOptions.overwrite = .overwrite
        uploadOptions.maxRetries = 12
        uploadOptions.retryDelay = .milliseconds(20)
        uploadOptions.stallTimeout = .seconds(1)
        var ok = 0
        var failed: [String: Int] = [:]
        var failures: [String] = []
        let faultsBefore = proxy.counts
        for (i, size) in Self.sizes(Self.uploads, seed: 7).enumerated() {
            let name = "UP_\(i).JPG"
            let local = dir.file("local/" + name)
            let data = try TestData.file(local, size: size, seed: UInt64(500 + i))
            do {
                _ = try await through.upload(local, to: "/UP/" + name, options: uploadOptions).result
                #expect(
                    FileManager.default.contents(atPath: card + "/UP/" + name) == data, "\(name) differs on the card")
                ok += 1
            } catch {
                let stored = FileManager.default.contents(atPath: card + "/UP/" + name)
                #expect(stored == nil || stored == data, "\(name) failed and left a wrong file: \(error)")
                failed["\(error.code)", default: 0] += 1
                failures.append(name)
            }
        }
        for name in failures {
            _ = try await direct.upload(dir.file("local/" + name), to: "/UP/" + name, options: uploadOptions).result
            #expect(
                FileManager.default.contents(atPath: card + "/UP/" + name)
                    == FileManager.default.contents(atPath: dir.file("local/" + name)))
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: card + "/UP").filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "temporary files left on the card: \(leftovers)")
        let faults = proxy.counts.merging(faultsBefore) { $0 - $1 }
        Self.report(
            "FlashAir (ferry card), \(Self.uploads) uploads, faults \(ChaosProxy.describe(faults)): \(ok) byte-identical, "
                + "\(failures.count) failed \(failed), all \(failures.count) completed by a fault-free run")
    }
}
