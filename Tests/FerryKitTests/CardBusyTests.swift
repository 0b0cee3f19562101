import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// A one-connection card whose connection another client holds (issue 28 item 6):
/// `ferry card --max-connections 1 --keep-idle-connections` keeps an idle client's
/// connection as a real card does, so a second client's connection waits 2 s and is
/// closed unanswered. Ferry says the card is busy with another client and tries again
/// for a bounded time, instead of "card not answering after 3 tries".
@Suite(.serialized, .timeLimit(.minutes(2)))
struct CardBusyTests {
    let folder: TempDir
    let card: FerryCardProcess

    init() throws {
        folder = try TempDir(prefix: "ferry-busy")
        try Data("hello".utf8).write(to: URL(fileURLWithPath: folder.path + "/A.TXT"))
        card = try FerryCardProcess(
            folder: folder.path, arguments: ["--max-connections", "1", "--keep-idle-connections"])
    }

    /// Another client: one request on a keep-alive connection, then the connection held
    /// open, idle, for `seconds`.
    func otherClient(holding seconds: Double) throws -> Process {
        let script = """
            import socket, sys, time
            s = socket.create_connection(("127.0.0.1", \(card.port)))
            s.sendall(b"GET /command.cgi?op=108 HTTP/1.1\\r\\nHost: card\\r\\n\\r\\n")
            s.recv(4096)
            print("holding", flush=True)
            time.sleep(\(seconds))
            s.close()
            """
        let p = Process()
        p.executableURL = URL(fileURLWithPath: TestProcess.which("python3") ?? "/usr/bin/python3")
        p.arguments = ["-c", script]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        // Holding once its request was answered.
        let line = out.fileHandleForReading.availableData
        #expect(String(decoding: line, as: UTF8.self).contains("holding"))
        return p
    }

    func fileSystem(busyWait: Duration) throws -> FlashAirFileSystem {
        var policy = FlashAirFileSystem.RequestPolicy()
        policy.busyWait = busyWait
        return FlashAirFileSystem(url: try RemoteURL(parsing: card.url("/")), policy: policy)
    }

    @Test func aCardHeldByAnotherClientIsReportedBusyNotSilent() async throws {
        let holder = try otherClient(holding: 30)
        defer { holder.terminate() }
        let fs = try fileSystem(busyWait: .seconds(3))
        let started = ContinuousClock.now
        do {
            _ = try await fs.list("/")
            Issue.record("the listing got through a card held by another client")
        } catch {
            let text = "\(error)"
            #expect(text.contains("the card is busy with another client: it allows one connection"), "\(text)")
            #expect(!text.contains("not answering after"), "\(text)")
            #expect(error.isTransient)
        }
        // Bounded: the busy wait (3 s) and the try in flight then (the card's 2 s wait), not more.
        let took = ContinuousClock.now - started
        #expect(took >= .seconds(3) && took < .seconds(12), "gave up after \(took)")
    }

    @Test func aCardLetGoByTheOtherClientIsListedWithinTheBusyWait() async throws {
        // 9 s: longer than the three tries a card call makes for silence (7.5 s here).
        let holder = try otherClient(holding: 9)
        defer { holder.terminate() }
        let fs = try fileSystem(busyWait: .seconds(20))
        let started = ContinuousClock.now
        let entries = try await fs.list("/")
        #expect(entries.map(\.name).contains("A.TXT"))
        let took = ContinuousClock.now - started
        #expect(took >= .seconds(8) && took < .seconds(20), "listed after \(took)")
    }
}
