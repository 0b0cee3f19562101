import CGPhoto2
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryKit

/// `camera://` through libgphoto2, against its "Directory Browse" driver on a
/// `disk:` port: a folder that libgphoto2 presents as a camera, so the calls
/// are those a real camera gets.
@Suite(.serialized)
struct CameraFileSystemTests {
    let root: TempDir
    let out: TempDir
    let photo: Data

    init() throws {
        root = try TempDir(prefix: "camera")
        out = try TempDir(prefix: "camera-out")
        try FileManager.default.createDirectory(atPath: root.file("DCIM/100CANON"), withIntermediateDirectories: true)
        photo = try TestData.file(root.file("DCIM/100CANON/IMG_0001.JPG"), size: 250_000, seed: 7)
        try TestData.file(root.file("DCIM/100CANON/IMG_0002.JPG"), size: 1_000, seed: 8)
        // A time in the past, to see it carried over.
        let old = Date(timeIntervalSince1970: 1_700_000_000)
        try FileManager.default.setAttributes(
            [.modificationDate: old], ofItemAtPath: root.file("DCIM/100CANON/IMG_0001.JPG"))
    }

    func camera(_ path: String = "/") throws -> any RemoteFileSystem {
        try Ferry.fileSystem(for: try RemoteURL(parsing: "camera://\(path)?port=disk:\(root.path)"))
    }

    @Test func urls() throws {
        let u = try RemoteURL(parsing: "camera:///DCIM?port=usb:001,004&model=Canon%20EOS%20R6")
        #expect(u.scheme == .camera && u.host == "camera" && u.path == "/DCIM")
        #expect(u.query == "port=usb:001,004&model=Canon%20EOS%20R6")
        let items = CameraFileSystem.queryItems(u.query!)
        #expect(items["port"] == "usb:001,004" && items["model"] == "Canon EOS R6")
    }

    @Test func listsStatsAndDownloads() async throws {
        let fs = try camera()
        #expect(fs.capabilities.contains(.oneConnection))
        #expect(try await fs.list("/").map(\.name) == ["DCIM"])
        let files = try await fs.list("/DCIM/100CANON")
        #expect(files.map(\.name).sorted() == ["IMG_0001.JPG", "IMG_0002.JPG"])
        let first = try #require(files.first { $0.name == "IMG_0001.JPG" })
        #expect(first.size == 250_000 && first.kind == .file)
        #expect(first.modified == RemoteTimestamp(utc: Date(timeIntervalSince1970: 1_700_000_000)))
        #expect(try await fs.stat("/DCIM/100CANON/IMG_0002.JPG").size == 1_000)
        let result = try await fs.download(first, to: out.file("a.jpg"), options: .init()).result
        #expect(result.size == 250_000)
        #expect(FileManager.default.contents(atPath: out.file("a.jpg")) == photo)
        #expect(!FileManager.default.fileExists(atPath: out.file("a.jpg.part")))
        let copied = try FileManager.default.attributesOfItem(atPath: out.file("a.jpg"))[.modificationDate] as? Date
        #expect(copied == Date(timeIntervalSince1970: 1_700_000_000))
        // Never replaced unless asked.
        await #expect(throws: FerryError.self) {
            try await fs.download(first, to: out.file("a.jpg"), options: .init()).result
        }
    }

    @Test func missingThingsAndWritesSayWhy() async throws {
        let fs = try camera()
        do {
            _ = try await fs.stat("/DCIM/100CANON/NOPE.JPG")
            Issue.record("found a missing file")
        } catch {
            #expect(error.code == .notFound)
        }
        do {
            _ = try await fs.download("/DCIM/100CANON/NOPE.JPG", to: out.file("n.jpg"), options: .init()).result
            Issue.record("downloaded a missing file")
        } catch {
            #expect(error.code == .notFound || error.code == .serverError, "\(error)")
        }
        do {
            try await fs.makeDirectory("/DCIM/NEW", createParents: false)
            Issue.record("made a folder")
        } catch {
            #expect(error.code == .unsupportedOperation)
        }
        let nowhere = try Ferry.fileSystem(for: try RemoteURL(parsing: "camera:///?port=disk:\(root.path)/gone"))
        do {
            _ = try await nowhere.list("/")
            Issue.record("listed a folder that is not there")
        } catch {
            #expect(error.code == .notFound && error.detail?.contains("disk: port") == true, "\(error)")
        }
    }

    /// Delete: a file the camera reports deletable goes; one it protects (the
    /// Directory Browse driver: no write permission) is listed read-only and stays.
    @Test func deletesOnlyWhatTheCameraLetsGo() async throws {
        let protected = root.file("DCIM/100CANON/IMG_0002.JPG")
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: protected)
        let fs = try camera()
        let listed = try await fs.list("/DCIM/100CANON")
        #expect(listed.first { $0.name == "IMG_0002.JPG" }?.isReadOnly == true)
        #expect(listed.first { $0.name == "IMG_0001.JPG" }?.isReadOnly == false)
        do {
            try await fs.delete("/DCIM/100CANON/IMG_0002.JPG")
            Issue.record("deleted a protected file")
        } catch {
            #expect(error.code == .permissionDenied && error.detail?.contains("protected") == true, "\(error)")
        }
        #expect(FileManager.default.fileExists(atPath: protected))
        try await fs.delete("/DCIM/100CANON/IMG_0001.JPG")
        #expect(!FileManager.default.fileExists(atPath: root.file("DCIM/100CANON/IMG_0001.JPG")))
        #expect(try await fs.list("/DCIM/100CANON").map(\.name) == ["IMG_0002.JPG"])
        do {
            try await fs.delete("/DCIM/100CANON/IMG_0001.JPG")
            Issue.record("deleted a file twice")
        } catch {
            #expect(error.code == .notFound, "\(error)")
        }
    }

    /// A second listing sees a photo added since (libgphoto2 keeps listings until told).
    @Test func listingAgainSeesNewPhotos() async throws {
        let fs = try camera()
        #expect(try await fs.list("/DCIM/100CANON").count == 2)
        try TestData.file(root.file("DCIM/100CANON/IMG_0003.JPG"), size: 500, seed: 9)
        #expect(try await fs.list("/DCIM/100CANON").map(\.name).sorted().last == "IMG_0003.JPG")
    }

    /// Thumbnails from the camera's Exif block (the Directory Browse driver has no
    /// preview of its own and no partial read), without reading the photo.
    @Test func thumbnailsFromTheCamerasExif() async throws {
        let jpeg = SampleJPEG.withThumbnail(width: 4000, height: 3000, orientation: 6)
        try Data(jpeg + [UInt8](repeating: 0x55, count: 300_000)).write(
            to: URL(fileURLWithPath: root.file("DCIM/100CANON/EXIF.JPG")))
        let fs = try camera()
        #expect(fs.capabilities.contains(.sourceThumbnails))
        let thumbnail = try #require(try await fs.thumbnail("/DCIM/100CANON/EXIF.JPG"))
        #expect(Array(thumbnail.jpeg) == SampleJPEG.thumbnail)
        #expect(thumbnail.orientation == 6 && thumbnail.width == 4000 && thumbnail.height == 3000)
        // Random bytes named .JPG: no Exif, no thumbnail.
        #expect(try await fs.thumbnail("/DCIM/100CANON/IMG_0002.JPG") == nil)
        do {
            _ = try await fs.thumbnail("/DCIM/100CANON/NOPE.JPG")
            Issue.record("a thumbnail of a missing file")
        } catch {
            #expect(error.code == .notFound, "\(error)")
        }
        // No partial reads on this driver: said so, not faked by reading the whole file.
        do {
            _ = try await fs.data(at: "/DCIM/100CANON/EXIF.JPG", range: 0..<100)
            Issue.record("a partial read on the Directory Browse driver")
        } catch {
            #expect(error.code == .unsupportedOperation, "\(error)")
        }
        #expect(try await fs.data(at: "/DCIM/100CANON/IMG_0002.JPG", limit: 1_000).count == 1_000)
        do {
            _ = try await fs.data(at: "/DCIM/100CANON/IMG_0002.JPG", limit: 999)
            Issue.record("read a file over the limit")
        } catch {
            #expect(error.code == .tooLarge, "\(error)")
        }
    }

    /// The camera unplugged (its `disk:` folder moved away) is "gone" (what sync
    /// and the browser's imports wait out), and it answers again when it returns.
    @Test func aCameraThatGoesAwayIsGoneAndComesBack() async throws {
        let fs = try camera()
        #expect(try await fs.list("/DCIM/100CANON").count == 2)
        try FileManager.default.moveItem(atPath: root.path, toPath: root.path + "-away")
        do {
            _ = try await fs.list("/DCIM/100CANON")
            Issue.record("listed a camera that is gone")
        } catch {
            #expect(error.code == .connectionFailed && SyncEngine.isSourceGone(error), "\(error)")
            #expect(error.detail?.contains("the camera is gone") == true, "\(error)")
        }
        do {
            _ = try await fs.download("/DCIM/100CANON/IMG_0001.JPG", to: out.file("g.jpg"), options: .init()).result
            Issue.record("downloaded from a camera that is gone")
        } catch {
            #expect(error.code == .connectionFailed, "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: out.file("g.jpg")))
        try FileManager.default.moveItem(atPath: root.path + "-away", toPath: root.path)
        #expect(try await fs.list("/DCIM/100CANON").count == 2)
        let result = try await fs.download("/DCIM/100CANON/IMG_0001.JPG", to: out.file("g.jpg"), options: .init())
            .result
        #expect(result.size == 250_000 && FileManager.default.contents(atPath: out.file("g.jpg")) == photo)
    }

    /// Unplugged mid-import: the files that arrived stay, the rest fail as "source
    /// gone", and the next pass (camera back) imports only the rest, byte for byte.
    @Test func unpluggedMidImportResumesWhenBack() async throws {
        for i in 3...6 {
            try TestData.file(root.file("DCIM/100CANON/IMG_000\(i).JPG"), size: 20_000 * i, seed: UInt64(i))
        }
        let fs = try camera("/DCIM")
        let folder = root.path
        let engine = SyncEngine(fileSystem: fs, directory: out.path, options: .init())
        let moved = Mutex(false)
        let first = try await engine.runPass { event in
            guard case .imported = event else { return }
            moved.withLock { done in
                if !done { done = (try? FileManager.default.moveItem(atPath: folder, toPath: folder + "-away")) != nil }
            }
        }
        #expect(moved.withLock { $0 })
        #expect(first.imported >= 1 && first.imported < 6, "\(first)")
        #expect(
            !first.failures.isEmpty && first.failures.allSatisfy { SyncEngine.isSourceGone($0.error) },
            "\(first.failures)")
        try FileManager.default.moveItem(atPath: folder + "-away", toPath: folder)
        let second = try await engine.runPass()
        #expect(second.failures.isEmpty, "\(second.failures)")
        #expect(first.imported + second.imported == 6, "\(first.imported) then \(second.imported)")
        for name in ["IMG_0001.JPG", "IMG_0002.JPG", "IMG_0003.JPG", "IMG_0006.JPG"] {
            let copied = try #require(
                FileManager.default.enumerator(atPath: out.path)?.allObjects
                    .compactMap { $0 as? String }.first { $0.hasSuffix(name) })
            #expect(
                FileManager.default.contents(atPath: out.file(copied))
                    == FileManager.default.contents(atPath: root.file("DCIM/100CANON/\(name)")), "\(name)")
        }
    }

    @Test func ptpipURLs() throws {
        let u = try RemoteURL(parsing: "ptpip://192.168.1.10/store_00010001/DCIM")
        #expect(u.scheme == .ptpip && u.host == "192.168.1.10" && u.path == "/store_00010001/DCIM")
        #expect(CameraFileSystem.key(u) == .init(port: "ptpip:192.168.1.10:15740", model: "PTP/IP Camera"))
        let v = try RemoteURL(parsing: "ptpip://10.0.0.5:15741/?model=PTP/IP%20Camera")
        #expect(v.port == 15741 && v.query == "model=PTP/IP%20Camera")
        #expect(CameraFileSystem.key(v) == .init(port: "ptpip:10.0.0.5:15741", model: "PTP/IP Camera"))
        #expect(CameraFileSystem.key(try RemoteURL(parsing: "ptpip://[fe80::1]/")).port == "ptpip:[fe80::1]:15740")
        #expect(try RemoteURL(parsing: u.redacted) == u)
        #expect(try Ferry.fileSystem(for: u) is CameraFileSystem)
        #expect(u.defaultPort == 15740)
    }

    // `ptpip://` with nothing listening is tested through the binary
    // (CameraCommandTests.ptpipWithNoCameraFailsClearly): libgphoto2's PTP/IP
    // driver waits with select(), whose fd_set aborts the process (glibc's
    // fortify check) for a descriptor above 1023, and this test process holds
    // that many by the time the whole suite has run.

    /// What autodetection finds (none on a machine without a camera); never the Directory Browse driver.
    @Test func detectsConnectedCameras() async throws {
        let found = try await CameraFileSystem.connectedCameras()
        #expect(!found.contains { $0.model == "Directory Browse" })
        let fs = try #require(try camera() as? CameraFileSystem)
        // A URL that names its port picks that camera: nothing to choose.
        #expect(try await fs.severalCameras() == nil)
    }

    /// Calls from many tasks at once all end: they run one by one on the camera's thread.
    @Test func callsFromManyTasksRunOneByOne() async throws {
        let fs = try camera()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 { group.addTask { try await fs.list("/DCIM/100CANON").count } }
            for try await count in group { #expect(count == 2) }
        }
    }
}

/// The decisions of the camera backend, without a camera.
struct CameraDecisionTests {
    @Test func choosesACamera() {
        let r6 = DetectedCamera(model: "Canon EOS R6", port: "usb:001,004")
        let z6 = DetectedCamera(model: "Nikon Z 6", port: "usb:001,005")
        #expect(CameraSelection.choose(port: "disk:/x", model: "", among: []) == .open(port: "disk:/x", model: ""))
        #expect(CameraSelection.choose(port: "", model: "", among: [r6, z6]) == .open(port: r6.port, model: r6.model))
        #expect(
            CameraSelection.choose(port: "", model: "nikon z 6", among: [r6, z6])
                == .open(port: z6.port, model: z6.model))
        guard case .none(let none) = CameraSelection.choose(port: "", model: "", among: []) else {
            Issue.record("chose a camera among none")
            return
        }
        #expect(none.contains("no camera found"))
        guard case .none(let other) = CameraSelection.choose(port: "", model: "Sony A7", among: [r6, z6]) else {
            Issue.record("chose a camera of another model")
            return
        }
        #expect(other.contains("Sony A7") && other.contains("Canon EOS R6 at usb:001,004"))
    }

    @Test func listsSeveralCamerasAndHowToPickOne() throws {
        let r6 = DetectedCamera(model: "Canon EOS R6", port: "usb:001,004")
        let z6 = DetectedCamera(model: "Nikon Z 6", port: "usb:001,005")
        #expect(CameraSelection.several([]) == nil && CameraSelection.several([r6]) == nil)
        let both = try #require(CameraSelection.several([r6, z6], path: "/"))
        #expect(both.table == ["Canon EOS R6  usb:001,004", "Nikon Z 6     usb:001,005"])
        #expect(both.hint.contains("2 cameras"))
        #expect(both.hint.contains("camera:///?port=usb:001,004") && both.hint.contains("?model=Canon%20EOS%20R6"))
        // The hint's URLs pick the camera they name.
        let picked = try RemoteURL(parsing: "camera:///?model=Canon%20EOS%20R6")
        #expect(CameraFileSystem.key(picked) == .init(port: "", model: "Canon EOS R6"))
    }

    @Test func resultCodesInWords() {
        #expect(CameraFailure.of(GP_ERROR_IO_USB_FIND) == .gone && CameraFailure.of(GP_ERROR_IO_READ) == .gone)
        #expect(CameraFailure.of(GP_ERROR_CAMERA_BUSY) == .busy && CameraFailure.of(GP_ERROR_IO_USB_CLAIM) == .busy)
        #expect(
            CameraFailure.of(GP_ERROR_FILE_NOT_FOUND) == .notFound
                && CameraFailure.of(GP_ERROR_NOT_SUPPORTED) == .unsupported)
        let gone = CameraFailure.error(GP_ERROR_IO_READ, operation: "download", target: "camera://camera/a.jpg")
        #expect(gone.code == .connectionFailed && gone.isTransient && SyncEngine.isSourceGone(gone))
        #expect(
            gone.description.contains("Error reading from the port") && gone.description.contains("the camera is gone"))
        let busy = CameraFailure.error(GP_ERROR_IO_USB_CLAIM, operation: "list", target: "camera://camera/")
        #expect(busy.detail?.contains("in use by another program") == true)
        // The driver's own words go with libgphoto2's.
        let said = CameraFailure.error(
            GP_ERROR, said: "Could not get information about 'a.jpg'", operation: "list", target: "x")
        #expect(said.code == .serverError && said.description.contains("Unspecified error: Could not get information"))
        // Opening: never seen is "no camera answers"; seen before and failing now is gone.
        let key = CameraWorker.Key(port: "usb:001,004", model: "")
        let never = CameraFailure.error(GP_ERROR_IO, operation: "list", target: "x", opening: key)
        #expect(never.code == .connectionFailed && never.detail?.contains("no camera answers at port") == true)
        let again = CameraFailure.error(
            GP_ERROR_MODEL_NOT_FOUND, operation: "list", target: "x", opening: key, seenBefore: true)
        #expect(again.code == .connectionFailed && again.detail?.contains("the camera is gone") == true)
        let ptpip = CameraFailure.error(
            GP_ERROR_IO, operation: "list", target: "x",
            opening: .init(port: "ptpip:127.0.0.1:9", model: "PTP/IP Camera"))
        #expect(ptpip.detail?.contains("PTP/IP at 127.0.0.1:9") == true)
    }

    @Test func listingsAreAskedAfreshWhenListedAgain() {
        var l = CameraListings()
        var forgotten: [Bool] = []
        for folder in ["/", "/DCIM", "/DCIM/100", "/DCIM", "/DCIM/100"] {
            forgotten.append(l.forgetBefore(listing: folder))
        }
        #expect(forgotten == [false, false, false, true, false])
        l.changed()
        let afterChange = [l.forgetBefore(listing: "/X"), l.forgetBefore(listing: "/Y")]
        #expect(afterChange == [true, false])
    }

    @Test func exifBlocksInEveryFormDriversGive() throws {
        let jpeg = SampleJPEG.withThumbnail(width: 6000, height: 4000, orientation: 8)
        // The APP1 payload: "Exif\0\0" and the TIFF data (the Directory Browse driver's form).
        let length = Int(jpeg[4]) << 8 | Int(jpeg[5])
        let payload = Data(jpeg[6..<(4 + length)])
        for form in [payload, payload.dropFirst(6), Data(jpeg)] {
            let t = try #require(CameraThumbnail.fromExif(Data(form)))
            #expect(Array(t.jpeg) == SampleJPEG.thumbnail && t.orientation == 8 && t.width == 6000)
        }
        #expect(CameraThumbnail.fromExif(Data("not exif".utf8)) == nil)
        #expect(CameraThumbnail.orientation(fromExif: payload) == 8)
        #expect(CameraThumbnail.fromPreview(Data(SampleJPEG.thumbnail), orientation: 3)?.orientation == 3)
        #expect(CameraThumbnail.fromPreview(Data("GIF89a".utf8), orientation: nil) == nil)
    }
}
