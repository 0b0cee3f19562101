import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// packaging/ferry-sync@.service as systemd would run it, without systemd (no
/// `systemd --user` can run in a container without systemd as PID 1): its
/// EnvironmentFile, WorkingDirectory and ExecStart line are read from the unit
/// and expanded with systemd's rules, `/usr/bin/ferry` is the built program, the
/// source is a `ferry card`, and the stop is SIGTERM, the signal systemd sends.
@Suite(.serialized)
struct SyncServiceTests {
    let home: TempDir
    let cardFolder: TempDir
    let fm = FileManager.default
    static let unitPath = TestProcess.packageRoot() + "/packaging/ferry-sync@.service"

    init() throws {
        home = try TempDir(prefix: "sync-service-home")
        cardFolder = try TempDir(prefix: "sync-service-card")
        try fm.createDirectory(atPath: cardFolder.file("DCIM/100__TSB"), withIntermediateDirectories: true)
        try fm.createDirectory(atPath: home.file(".config/ferry/sync"), withIntermediateDirectories: true)
    }

    /// The unit's `[Service]` settings, `%h` and `%i` filled in.
    static func settings(home: String, instance: String) throws -> [String: String] {
        var out: [String: String] = [:]
        for line in try String(contentsOfFile: unitPath, encoding: .utf8).split(separator: "\n") {
            guard !line.hasPrefix("#"), let eq = line.firstIndex(of: "=") else { continue }
            let value = line[line.index(after: eq)...].replacingOccurrences(of: "%h", with: home)
                .replacingOccurrences(of: "%i", with: instance).replacingOccurrences(of: "%I", with: instance)
            out[String(line[..<eq])] = value
        }
        return out
    }

    /// An EnvironmentFile's KEY=VALUE lines (comments and blank lines skipped).
    static func environment(file: String) throws -> [String: String] {
        var out: [String: String] = [:]
        for line in try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            guard !text.hasPrefix("#"), let eq = text.firstIndex(of: "=") else { continue }
            out[String(text[..<eq])] = String(text[text.index(after: eq)...])
        }
        return out
    }

    /// systemd's ExecStart expansion: `${X}` as a word is one argument, `$X` as a
    /// word is X split at whitespace (none when unset).
    static func expand(_ line: String, _ env: [String: String]) -> [String] {
        line.split(separator: " ").flatMap { word -> [String] in
            if word.hasPrefix("${") && word.hasSuffix("}") {
                return [env[String(word.dropFirst(2).dropLast())] ?? ""]
            }
            if word.hasPrefix("$") {
                return (env[String(word.dropFirst())] ?? "").split(separator: " ").map(String.init)
            }
            return [String(word)]
        }
    }

    /// Starts the unit's ExecStart for the instance `name`, stdout and stderr to a log (as to the journal).
    func start(_ name: String, log: String) throws -> ServerProcess {
        let unit = try Self.settings(home: home.path, instance: name)
        let confPath = try #require(unit["EnvironmentFile"])
        #expect(confPath == home.file(".config/ferry/sync/\(name).conf"))
        let env = try Self.environment(file: confPath)
        let argv = Self.expand(try #require(unit["ExecStart"]), env)
        #expect(argv.first == "/usr/bin/ferry")
        let cwd = try #require(unit["WorkingDirectory"])
        return try ServerProcess(
            TestProcess.ferryExecutable(), Array(argv.dropFirst()), cwd: cwd, logPath: log, environment: env)
    }

    static func size(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
    }

    @Test func theUnitRestartsOnFailureAndTreatsAStopAsSuccess() throws {
        let unit = try Self.settings(home: "/home/u", instance: "camera")
        #expect(unit["Restart"] == "on-failure")
        #expect(unit["SuccessExitStatus"] == "130")
        #expect(unit["RestartPreventExitStatus"] == "2")
        #expect(unit["KillSignal"] == "SIGTERM")
        #expect(unit["EnvironmentFile"] == "/home/u/.config/ferry/sync/camera.conf")
        // The example conf file parses to a source and a destination.
        let example = try Self.environment(file: TestProcess.packageRoot() + "/packaging/camera.conf")
        #expect(example["FERRY_SOURCE"] == "flashair://192.168.0.1/DCIM")
        #expect(example["FERRY_DEST"] == "Pictures/Camera")
    }

    @Test func sigtermStopsCleanlyAndTheNextStartResumes() throws {
        var originals: [String: Data] = [:]
        for i in 1...3 {
            let name = "DCIM/100__TSB/IMG_000\(i).JPG"
            originals["/" + name] = try TestData.file(cardFolder.file(name), size: 40_000 * i, seed: UInt64(i))
        }
        // Named to sort last: imported after the photos, slowly enough to be stopped halfway.
        originals["/DCIM/100__TSB/ZZZ_0001.MOV"] = try TestData.file(
            cardFolder.file("DCIM/100__TSB/ZZZ_0001.MOV"), size: 3_000_000, seed: 40)
        let card = try FerryCardProcess(folder: cardFolder.path, arguments: ["--rate", "600000"])
        defer { card.stop() }
        try """
        # test instance
        FERRY_SOURCE=\(card.url("/DCIM"))
        FERRY_DEST=Pictures/Camera
        FERRY_OPTIONS=--interval 0.3
        """.write(toFile: home.file(".config/ferry/sync/camera.conf"), atomically: true, encoding: .utf8)
        let dest = home.file("Pictures/Camera")
        let part = dest + "/100__TSB/ZZZ_0001.MOV.part"

        let first = try start("camera", log: home.file("first.log"))
        defer { first.stop() }
        let deadline = Date().addingTimeInterval(20)
        while (Self.size(part) ?? 0) < 600_000 && Date() < deadline && first.process.isRunning { usleep(20_000) }
        #expect((Self.size(part) ?? 0) >= 600_000, "\(first.log)")
        let stopAsked = Date()
        first.signal(SIGTERM)  // systemctl --user stop
        first.process.waitWithoutRunLoop()
        #expect(Date().timeIntervalSince(stopAsked) < 5)
        #expect(first.process.terminationStatus == 130, "\(first.log)")  // SuccessExitStatus: a clean stop

        // No partial file under a final name; the partial one is kept for the next start.
        #expect(!fm.fileExists(atPath: dest + "/100__TSB/ZZZ_0001.MOV"))
        let kept = Self.size(part) ?? 0
        #expect(kept >= 600_000 && kept < 3_000_000)
        for i in 1...3 {
            let path = "/DCIM/100__TSB/IMG_000\(i).JPG"
            #expect(fm.contents(atPath: dest + "/100__TSB/IMG_000\(i).JPG") == originals[path])
        }
        // One log line per imported file, as it landed.
        let lines = first.log.split(separator: "\n")
        for i in 1...3 {
            let line = "imported 100__TSB/IMG_000\(i).JPG ("
            #expect(lines.filter { $0.hasPrefix(line) }.count == 1, "\(first.log)")
        }
        #expect(!first.log.contains("imported 100__TSB/ZZZ_0001.MOV"))

        // The history holds exactly the whole files: a dry run plans only the stopped one.
        let dry = try TestProcess.run(
            TestProcess.ferryExecutable(), ["sync", card.url("/DCIM"), "Pictures/Camera", "--dry-run", "--json"],
            cwd: home.path)
        #expect(dry.status == 0, "\(dry.stderr)")
        let planned = SyncCommandTests.jsonLines(dry.stdout).filter { $0["type"] as? String == "planned" }
        #expect(planned.map { $0["path"] as? String } == ["/DCIM/100__TSB/ZZZ_0001.MOV"], "\(dry.stdout)")

        // The next start (Restart=, or the next login) resumes the partial file and imports nothing twice.
        let second = try start("camera", log: home.file("second.log"))
        defer { second.stop() }
        let done = Date().addingTimeInterval(20)
        while !second.log.contains("imported 100__TSB/ZZZ_0001.MOV") && Date() < done
            && second.process.isRunning
        {
            usleep(50_000)
        }
        #expect(fm.contents(atPath: dest + "/100__TSB/ZZZ_0001.MOV") == originals["/DCIM/100__TSB/ZZZ_0001.MOV"])
        #expect(!fm.fileExists(atPath: part))
        let resumed = second.log.split(separator: "\n").filter { $0.hasPrefix("imported 100__TSB/ZZZ_0001.MOV (") }
        #expect(resumed.count == 1 && resumed[0].contains("resumed at"), "\(second.log)")
        #expect(!second.log.contains("IMG_000"), "\(second.log)")
        // Idle, SIGTERM ends it at once with 0.
        second.signal(SIGTERM)
        second.process.waitWithoutRunLoop()
        #expect(second.process.terminationStatus == 0, "\(second.log)")
    }

    @Test func aConfWithoutASourceFailsWithUsageAndIsNotRestarted() throws {
        try "FERRY_DEST=Pictures\n".write(
            toFile: home.file(".config/ferry/sync/broken.conf"), atomically: true, encoding: .utf8)
        let run = try start("broken", log: home.file("broken.log"))
        run.process.waitWithoutRunLoop()
        // 2 is in RestartPreventExitStatus: a bad conf is reported, not retried forever.
        #expect(run.process.terminationStatus == 2, "\(run.log)")
        #expect(!run.log.isEmpty)
    }
}
