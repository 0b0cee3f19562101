import CGPhoto2
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A camera through libgphoto2 as a remote file system: `camera:///PATH` (the
/// first camera found), `camera:///PATH?port=usb:001,004`, `?model=NAME`,
/// `camera:///PATH?port=disk:/srv/folder` (libgphoto2's "Directory Browse"
/// driver: a folder presented as a camera, for tests and demos), and
/// `ptpip://ADDRESS[:PORT]/PATH`, a camera on Wi-Fi (PTP/IP, port 15740).
///
/// Every call runs on the camera's own thread (`CameraWorker`), one at a
/// time. Lists folders and files with their sizes and times as the camera
/// gives them (a file the camera does not let go is read-only); downloads
/// stream into `NAME.part` beside the destination, are checked against the
/// camera's size, flushed and renamed. Thumbnails come from the camera's own
/// data (the Exif block, else its preview), never from the whole photo. Deletes
/// what the camera reports deletable. A camera unplugged or switched off is
/// `connectionFailed` ("gone"), opened afresh on the next call. Upload, mkdir,
/// rmdir and rename throw `unsupportedOperation`.
public struct CameraFileSystem: RemoteFileSystem {
    /// The URL this file system was opened with.
    public let url: RemoteURL
    let worker: CameraWorker

    /// The port PTP/IP cameras listen on.
    public static let ptpipPort = 15740

    /// The model libgphoto2 gives a camera on Wi-Fi (its PTP/IP driver).
    static let ptpipModel = "PTP/IP Camera"

    /// Opens the camera a `camera:` or `ptpip:` URL names (it is asked on first use).
    public init(url: RemoteURL) {
        self.url = url
        worker = CameraWorker.shared(CameraFileSystem.key(url))
    }

    /// libgphoto2's port and model for a URL: `?port=` and `?model=`; for
    /// `ptpip://ADDRESS[:PORT]/`, the port `ptpip:ADDRESS:PORT` and the PTP/IP driver.
    static func key(_ url: RemoteURL) -> CameraWorker.Key {
        let items = url.query.map(CameraFileSystem.queryItems) ?? [:]
        if url.scheme == .ptpip {
            let host = url.host.contains(":") ? "[\(url.host)]" : url.host
            return .init(port: "ptpip:\(host):\(url.port ?? ptpipPort)", model: items["model"] ?? ptpipModel)
        }
        return .init(port: items["port"] ?? "", model: items["model"] ?? "")
    }

    /// One request at a time; thumbnails from the camera's own data.
    public var capabilities: RemoteCapabilities { [.oneConnection, .sourceThumbnails] }

    func shown(_ path: String) -> String {
        var u = url.with(path: path)
        u.query = url.query
        return u.redacted
    }

    /// `port=usb:001,004&model=Canon%20EOS%20R6`, decoded.
    static func queryItems(_ query: String) -> [String: String] {
        var out: [String: String] = [:]
        for item in query.split(separator: "&") {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            out[parts[0]] = RemoteURL.percentDecode(parts[1].replacingOccurrences(of: "+", with: " ")) ?? parts[1]
        }
        return out
    }

    /// The cameras connected now, as libgphoto2's autodetection finds them (USB;
    /// neither the Directory Browse driver nor cameras on Wi-Fi are found this way).
    public static func connectedCameras() async throws(FerryError) -> [DetectedCamera] {
        try await CameraWorker.connected()
    }

    /// For `ferry ls camera:///` with no `?port=` or `?model=`: the cameras as lines
    /// (model, port) and how to pick one, when several are connected; nil otherwise.
    public func severalCameras() async throws(FerryError) -> (table: [String], hint: String)? {
        guard url.scheme == .camera, worker.key.port.isEmpty, worker.key.model.isEmpty else { return nil }
        return CameraSelection.several(try await CameraFileSystem.connectedCameras(), path: url.path)
    }

    /// Lists one folder: its folders, then its files with size, time, and as
    /// read-only those the camera does not let be deleted.
    public func list(_ path: String) async throws(FerryError) -> [RemoteEntry] {
        let folder = RemotePath.normalize(path, keepingServerRoot: false)
        let target = shown(folder)
        return try await worker.run("list", target: target) { session throws(FerryError) in
            let camera = session.open
            // New photos the camera announced (PTP's ObjectAdded) enter libgphoto2's listings.
            if ferry_gp_take_events(camera, session.context) > 0 { session.listings.changed() }
            if session.listings.forgetBefore(listing: folder) { ferry_gp_forget_listings(camera) }
            var entries: [RemoteEntry] = []
            for name in try CameraFileSystem.names(session, folder, folders: true, target: target) {
                entries.append(RemoteEntry(name: name, path: RemotePath.join(folder, name), kind: .directory))
            }
            for name in try CameraFileSystem.names(session, folder, folders: false, target: target) {
                var size: Int64 = -1
                var mtime: Int64 = 0
                var deletable: Int32 = -1
                let r = ferry_gp_file_info(camera, folder, name, session.context, &size, &mtime, &deletable)
                entries.append(
                    RemoteEntry(
                        name: name, path: RemotePath.join(folder, name), kind: .file,
                        size: r >= GP_OK && size >= 0 ? size : nil,
                        modified: r >= GP_OK && mtime > 0
                            ? RemoteTimestamp(utc: Date(timeIntervalSince1970: TimeInterval(mtime))) : nil,
                        isReadOnly: r >= GP_OK && deletable == 0))
            }
            return entries
        }
    }

    private static func names(
        _ session: CameraWorker.Session, _ folder: String, folders: Bool, target: String
    ) throws(FerryError) -> [String] {
        let camera = session.open
        let context = session.context
        var list: OpaquePointer?
        guard gp_list_new(&list) >= GP_OK, let list else {
            throw FerryError(.unexpected, operation: "list", target: target, detail: "out of memory")
        }
        defer { gp_list_free(list) }
        let r =
            folders
            ? gp_camera_folder_list_folders(camera, folder, list, context)
            : gp_camera_folder_list_files(camera, folder, list, context)
        guard r >= GP_OK else { throw session.error(r, operation: "list", target: target) }
        var names: [String] = []
        for i in 0..<max(0, gp_list_count(list)) {
            var name: UnsafePointer<CChar>?
            if gp_list_get_name(list, i, &name) >= GP_OK, let name { names.append(String(cString: name)) }
        }
        return names
    }

    /// Describes a file or folder by listing its parent.
    public func stat(_ path: String) async throws(FerryError) -> RemoteEntry {
        let p = RemotePath.normalize(path, keepingServerRoot: false)
        if p == "/" { return RemoteEntry(name: "/", path: "/", kind: .directory) }
        return try await ListedEntry.stat(p, shown: shown(p)) { parent async throws(FerryError) in
            try await list(parent)
        }
    }

    /// Downloads a file into `NAME.part` beside `destination`, checks its size
    /// against the camera's, flushes it and renames it into place. An interrupted
    /// download starts over (its `.part` is replaced): libgphoto2 reads a file
    /// from an offset only on some drivers, and a part from a camera that went away
    /// is not trusted. Never a wrong file: the size must be the camera's.
    public func download(_ path: String, to destination: String, options: DownloadOptions) -> Transfer {
        let destination = LocalDestination.prepare(destination, options)
        let p = RemotePath.normalize(path, keepingServerRoot: false)
        let display = shown(p)
        return Transfer.start(source: display, destination: destination) { transfer async throws(FerryError) in
            let started = ContinuousClock.now
            try LocalDestination.makeReady(destination, options)
            if FileManager.default.fileExists(atPath: destination),
                let skipped = try OverwriteDecision.check(
                    .file(size: LocalFile.size(atPath: destination)), policy: options.overwrite,
                    operation: "download", source: display, destination: destination, started: started,
                    folder: FerryError(.localIO, operation: "download", target: destination))
            {
                return skipped
            }
            let (folder, name) = RemotePath.split(p)
            let part = destination + ".part"
            // The camera's thread only moves the bytes; the flush, the time and the
            // checksum follow here, while the camera already sends the next file.
            let (fd, size, mtime) = try await worker.run("download", target: display) {
                session throws(FerryError) -> (Int32, Int64, Int64) in
                let camera = session.open
                let context = session.context
                var expected: Int64 = -1
                var mtime: Int64 = 0
                var deletable: Int32 = -1
                let info = ferry_gp_file_info(camera, folder, name, context, &expected, &mtime, &deletable)
                guard info >= GP_OK else { throw session.error(info, operation: "download", target: display) }
                let fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                guard fd >= 0 else { throw FerryError.posix(errno, operation: "download", path: part) }
                var handedOver = false
                defer { if !handedOver { close(fd) } }
                let r = ferry_gp_get_to_fd(camera, folder, name, fd, context)
                guard r >= GP_OK else { throw session.error(r, operation: "download", target: display) }
                var st = Glibc.stat()
                guard fstat(fd, &st) == 0 else { throw FerryError.posix(errno, operation: "download", path: part) }
                let got = Int64(st.st_size)
                if expected >= 0 && got != expected {
                    throw FerryError(
                        .verificationFailed, operation: "download", target: display,
                        detail: "got \(got) bytes, the camera says \(expected)", isTransient: true)
                }
                handedOver = true
                return (fd, got, mtime)
            }
            defer { close(fd) }
            if mtime > 0 {
                var times = [timespec(tv_sec: Int(mtime), tv_nsec: 0), timespec(tv_sec: Int(mtime), tv_nsec: 0)]
                futimens(fd, &times)
            }
            guard fsync(fd) == 0 else { throw FerryError.posix(errno, operation: "sync", path: part) }
            // libgphoto2 writes the bytes itself: the checksum is read back (from the page cache).
            var sha256: String?
            if options.computeChecksum {
                sha256 = Digest.sha256(ofDescriptor: fd, length: size)
                guard sha256 != nil else { throw FerryError.posix(EIO, operation: "checksum", path: part) }
            }
            if options.overwrite == .overwrite {
                try LocalFile.rename(part, to: destination)
            } else {
                try LocalFile.renameNoReplace(part, to: destination)
            }
            var result = TransferResult(
                source: display, destination: destination, size: size, bytesTransferred: size,
                duration: .now - started)
            result.sha256 = sha256
            if mtime > 0 { result.sourceModified = Date(timeIntervalSince1970: TimeInterval(mtime)) }
            return result
        }
    }
}
