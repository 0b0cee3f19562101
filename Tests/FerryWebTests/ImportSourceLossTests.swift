import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWeb

/// A card that drops out does not end the page's import (issue 28 item 11): the
/// import waits for it ("the card stopped answering") and goes on by itself when
/// it answers again; nothing counts as failed that arrives in the end.
@Suite struct ImportSourceLossTests {
    typealias J = ImportJob

    @Test func whatAPassEndingLeadsTo() {
        #expect(J.afterPass(cancelled: false, failures: [], passError: nil, reconnects: 0) == .done)
        #expect(
            J.afterPass(cancelled: true, failures: [.connectionFailed], passError: nil, reconnects: 0) == .cancelled)
        // Lost with the source: wait, whatever else failed.
        for code in [FerryError.Code.connectionFailed, .timedOut, .notAnswering] {
            #expect(J.afterPass(cancelled: false, failures: [code], passError: nil, reconnects: 0) == .waitForSource)
            #expect(J.afterPass(cancelled: false, failures: [], passError: code, reconnects: 3) == .waitForSource)
            #expect(
                J.afterPass(cancelled: false, failures: [.diskFull, code], passError: nil, reconnects: 1)
                    == .waitForSource)
        }
        // A file's own trouble is a failure, not a wait.
        #expect(J.afterPass(cancelled: false, failures: [.diskFull], passError: nil, reconnects: 0) == .failed)
        #expect(J.afterPass(cancelled: false, failures: [], passError: .authenticationFailed, reconnects: 0) == .failed)
        // A source that keeps dropping out ends the import after a bounded number of passes.
        #expect(
            J.afterPass(cancelled: false, failures: [.connectionFailed], passError: nil, reconnects: J.maxReconnects)
                == .failed)
    }

    @Test func anImportWaitsForACardThatDropsOutAndGoesOn() async throws {
        let folder = try TempDir(prefix: "ferry-import-loss")
        let root = folder.file("card")
        try FileManager.default.createDirectory(atPath: root + "/DCIM/100__TSB", withIntermediateDirectories: true)
        var files: [String: Data] = [:]
        for i in 1...5 {
            let name = "IMG_000\(i).JPG"
            files[name] = try TestData.file(root + "/DCIM/100__TSB/" + name, size: 1_200_000, seed: UInt64(40 + i))
        }
        var card: FerryCardProcess? = try FerryCardProcess(
            folder: root, arguments: ["--rate", "1000000", "--max-connections", "1"])
        let port = card!.port
        defer { card?.stop() }
        var configuration = WebConfiguration(
            source: try RemoteURL(parsing: card!.url("/")), host: "127.0.0.1", port: 0)
        configuration.cacheDirectory = folder.file("cache")
        configuration.importDirectory = folder.file("imported")
        let api = try WebAPI(configuration: configuration)
        _ = await api.handle(APITests.request("/api/list?path=%2FDCIM%2F100__TSB"))
        let started = await api.handle(ImportAPITests.post("/api/import", [:]))
        #expect(started.status == 202)
        func status() async -> [String: Any] { APITests.object(await api.handle(APITests.request("/api/import"))) }

        // Out of range after about two files.
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline, (await status()["bytesDone"] as? Int ?? 0) < 2_000_000 {
            try await Task.sleep(for: .milliseconds(100))
        }
        card?.stop()
        card = nil
        var waiting: [String: Any] = [:]
        let waitDeadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < waitDeadline {
            waiting = await status()
            if waiting["waitingForSource"] as? Bool == true { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(waiting["waitingForSource"] as? Bool == true, "\(waiting)")
        #expect(waiting["state"] as? String == "running" && waiting["failed"] as? Int == 0, "\(waiting)")
        // Still waiting a while later, and not counting time left against a source that is gone.
        try await Task.sleep(for: .seconds(4))
        let still = await status()
        #expect(still["state"] as? String == "running" && still["waitingForSource"] as? Bool == true, "\(still)")
        #expect(still["bytesPerSecond"] as? Double == 0 && still["eta"] == nil, "\(still)")

        // Back in range, on the same address.
        card = try FerryCardProcess(
            folder: root, arguments: ["--rate", "1000000", "--max-connections", "1", "--port", "\(port)"])
        let end = try await ImportAPITests.finished(api)
        #expect(end["state"] as? String == "done", "\(end)")
        #expect(end["done"] as? Int == 5 && end["failed"] as? Int == 0, "\(end)")
        #expect((end["reconnects"] as? Int ?? 0) >= 1, "\(end)")
        for (name, data) in files {
            let copy = folder.file("imported/DCIM/100__TSB/" + name)
            #expect(FileManager.default.contents(atPath: copy) == data, "\(name)")
        }
        let left = try FileManager.default.subpathsOfDirectory(atPath: folder.file("imported"))
        #expect(!left.contains { $0.hasSuffix(".part") || $0.hasSuffix(".journal") }, "\(left)")
    }
}
