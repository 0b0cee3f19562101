import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// `FerryError.wrap`: what an error from outside Ferry becomes inside a
/// `throws(FerryError)` function.
struct FerryErrorWrapTests {
    struct Odd: Error, CustomStringConvertible {
        var description: String { "something odd happened" }
    }

    @Test func aFerryErrorStaysItselfAndOnlyGainsMissingContext() {
        let original = FerryError(.notFound, operation: "list", serverCode: 550)
        let e = FerryError.wrap(original, operation: "sync", target: "/a")
        #expect(e.code == .notFound && e.operation == "list" && e.target == "/a" && e.serverCode == 550)
    }

    @Test func cancellationIsCancelled() {
        let e = FerryError.wrap(CancellationError(), operation: "read", target: "/a")
        #expect(e.code == .cancelled && e.operation == "read" && e.target == "/a")
    }

    @Test func posixErrorsMapAsALocalFileCall() {
        let full = FerryError.wrap(POSIXError(.ENOSPC), operation: "write", target: "/a")
        #expect(full.code == .diskFull && full.detail?.contains("free some space") == true, "\(full)")
        let refused = FerryError.wrap(POSIXError(.EACCES), operation: "write", target: "/a")
        #expect(refused.code == .localIO && refused.detail == "choose a writable destination", "\(refused)")
        let missing = FerryError.wrap(NSError(domain: NSPOSIXErrorDomain, code: Int(ENOENT)), operation: "read")
        #expect(missing.code == .localIO && missing.serverText == String(cString: strerror(ENOENT)), "\(missing)")
    }

    @Test func foundationFileErrorsGetTheirCodes() throws {
        let dir = try TempDir(prefix: "wrap")
        let fm = FileManager.default
        // Real errors from FileManager, with the path they name.
        do {
            try fm.removeItem(atPath: dir.file("missing"))
            Issue.record("removed a missing file")
        } catch {
            let e = FerryError.wrap(error, operation: "delete")
            #expect(e.code == .notFound && e.target == dir.file("missing"), "\(e)")
            #expect(e.serverText == String(cString: strerror(ENOENT)), "\(e)")
        }
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir.file("file")))
        do {
            try fm.createDirectory(atPath: dir.file("file"), withIntermediateDirectories: true)
            Issue.record("made a folder over a file")
        } catch {
            let e = FerryError.wrap(error, operation: "mkdir")
            #expect(e.code == .destinationExists && e.target == dir.file("file"), "\(e)")
        }
        do {
            try fm.createDirectory(atPath: dir.file("file/sub"), withIntermediateDirectories: true)
            Issue.record("made a folder inside a file")
        } catch {
            // Foundation's catch-all write error: the errno underneath says what happened.
            let e = FerryError.wrap(error, operation: "mkdir")
            #expect(e.code == .localIO && e.serverText == String(cString: strerror(ENOTDIR)), "\(e)")
        }
        // Those a test running as root cannot provoke.
        let denied = FerryError.wrap(CocoaError(.fileWriteNoPermission), operation: "mkdir", target: "/ro")
        #expect(denied.code == .permissionDenied && denied.detail == "choose a writable destination", "\(denied)")
        let full = FerryError.wrap(CocoaError(.fileWriteOutOfSpace), operation: "write", target: "/a")
        #expect(full.code == .diskFull, "\(full)")
        let unreadable = FerryError.wrap(CocoaError(.fileReadNoPermission), operation: "read", target: "/a")
        #expect(unreadable.code == .permissionDenied, "\(unreadable)")
    }

    @Test func anythingElseIsUnexpectedWithItsOwnWords() {
        let e = FerryError.wrap(Odd(), operation: "thumbnail", target: "/a.jpg")
        #expect(e.code == .unexpected && e.code.description == "unexpected error")
        #expect(e.detail == "Odd: something odd happened", "\(e)")
        #expect(e.description == "thumbnail /a.jpg: unexpected error (Odd: something odd happened)")
        // A Cocoa error that is not about files is no local file error either.
        let coder = FerryError.wrap(CocoaError(.coderReadCorrupt))
        #expect(coder.code == .unexpected, "\(coder)")
    }

    @Test func aLocalFolderSpeaksTheCodesOfEverySource() async throws {
        let dir = try TempDir(prefix: "wrap-local")
        let fs = LocalFileSystem(url: try RemoteURL(parsing: "file://" + dir.path))
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir.file("file")))
        do {
            try await fs.makeDirectory(dir.file("file/sub"), createParents: true)
            Issue.record("made a folder inside a file")
        } catch {
            #expect(error.code == .localIO && error.operation == "mkdir", "\(error)")
        }
        do {
            try await fs.makeDirectory(dir.file("file"), createParents: false)
            Issue.record("made a folder over a file")
        } catch {
            #expect(error.code == .destinationExists, "\(error)")
        }
        do {
            try await fs.delete(dir.file("missing"))
            Issue.record("deleted a missing file")
        } catch {
            #expect(error.code == .notFound && error.target == dir.file("missing"), "\(error)")
        }
    }
}
