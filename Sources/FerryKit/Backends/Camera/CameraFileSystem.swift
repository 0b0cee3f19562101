import CGPhoto2
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A camera through libgphoto2 as a remote file system: `camera:///PATH` (the
/// first camera found), `camera:///PATH?port=usb:001,004`, `?model=NAME`, and
/// `camera:///PATH?port=disk:/srv/folder` (libgphoto2's "Directory Browse"
/// driver: a folder presented as a camera, for tests and demos).
///
/// Every call runs on the camera's own thread (`CameraWorker`), one at a
/// time. Lists folders and files with their sizes and times as the camera
/// gives them; downloads stream into `NAME.part` beside the destination, are
/// checked against the camera's size, flushed and renamed. Writing is not
/// offered yet: upload, delete, mkdir, rmdir and rename throw `unsupportedOperation`.
public struct CameraFileSystem: RemoteFileSystem {
    /// The URL this file system was opened with.
    public let url: RemoteURL
    let worker: CameraWorker

    /// Opens the camera a `camera:` URL names (it is asked on first use).
    public init(url: RemoteURL) {
        self.url = url
        let items = url.query.map(CameraFileSystem.queryItems) ?? [:]
        worker = CameraWorker.shared(.init(port: items["port"] ?? "", model: items["model"] ?? ""))
    }

    /// One request at a time.
    public var capabilities: RemoteCapabilities { [.oneConnection] }

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

    /// Lists one folder: its folders, then its files with size and time.
    public func list(_ path: String) async throws(FerryError) -> [RemoteEntry] {
        let folder = FlashAirListing.normalize(path)
        let target = shown(folder)
        return try await worker.run("list", target: target) { camera, context throws(FerryError) in
            var entries: [RemoteEntry] = []
            for name in try CameraFileSystem.names(camera, context, folder, folders: true, target: target) {
                entries.append(RemoteEntry(name: name, path: FlashAirListing.join(folder, name), kind: .directory))
            }
            for name in try CameraFileSystem.names(camera, context, folder, folders: false, target: target) {
                var size: Int64 = -1
                var mtime: Int64 = 0
                let r = ferry_gp_file_info(camera, folder, name, context, &size, &mtime)
                entries.append(
                    RemoteEntry(
                        name: name, path: FlashAirListing.join(folder, name), kind: .file,
                        size: r >= GP_OK && size >= 0 ? size : nil,
                        modified: r >= GP_OK && mtime > 0
                            ? RemoteTimestamp(utc: Date(timeIntervalSince1970: TimeInterval(mtime))) : nil))
            }
            return entries
        }
    }

    private static func names(
        _ camera: UnsafeMutablePointer<Camera>, _ context: OpaquePointer?, _ folder: String, folders: Bool,
        target: String
    ) throws(FerryError) -> [String] {
        var list: OpaquePointer?
        guard gp_list_new(&list) >= GP_OK, let list else {
            throw FerryError(.unexpected, operation: "list", target: target, detail: "out of memory")
        }
        defer { gp_list_free(list) }
        let r =
            folders
            ? gp_camera_folder_list_folders(camera, folder, list, context)
            : gp_camera_folder_list_files(camera, folder, list, context)
        guard r >= GP_OK else { throw CameraWorker.error(r, operation: "list", target: target) }
        var names: [String] = []
        for i in 0..<max(0, gp_list_count(list)) {
            var name: UnsafePointer<CChar>?
            if gp_list_get_name(list, i, &name) >= GP_OK, let name { names.append(String(cString: name)) }
        }
        return names
    }

    /// Describes a file or folder by listing its parent.
    public func stat(_ path: String) async throws(FerryError) -> RemoteEntry {
        let p = FlashAirListing.normalize(path)
        if p == "/" { return RemoteEntry(name: "/", path: "/", kind: .directory) }
        let (parent, name) = FlashAirFileSystem.split(p)
        let entries: [RemoteEntry]
        do {
            entries = try await list(parent)
        } catch  where error.code == .notFound {
            throw FerryError(.notFound, operation: "stat", target: shown(p))
        }
        guard let found = entries.first(where: { $0.name == name }) else {
            throw FerryError(.notFound, operation: "stat", target: shown(p))
        }
        return found
    }

    /// Downloads a file into `NAME.part` beside `destination`, checks its size
    /// against the camera's, flushes it and renames it into place. A camera's
    /// file cannot be read from an offset, so an interrupted download starts over.
    public func download(_ path: String, to destination: String, options: DownloadOptions) -> Transfer {
        let destination = LocalDestination.prepare(destination, options)
        let p = FlashAirListing.normalize(path)
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
            let (folder, name) = FlashAirFileSystem.split(p)
            let part = destination + ".part"
            let size: Int64 = try await worker.run("download", target: display) {
                camera, context throws(FerryError) in
                var expected: Int64 = -1
                var mtime: Int64 = 0
                let info = ferry_gp_file_info(camera, folder, name, context, &expected, &mtime)
                guard info >= GP_OK else { throw CameraWorker.error(info, operation: "download", target: display) }
                let fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                guard fd >= 0 else { throw FerryError.posix(errno, operation: "download", path: part) }
                defer { close(fd) }
                let r = ferry_gp_get_to_fd(camera, folder, name, fd, context)
                guard r >= GP_OK else { throw CameraWorker.error(r, operation: "download", target: display) }
                var st = Glibc.stat()
                guard fstat(fd, &st) == 0 else { throw FerryError.posix(errno, operation: "download", path: part) }
                let got = Int64(st.st_size)
                if expected >= 0 && got != expected {
                    throw FerryError(
                        .verificationFailed, operation: "download", target: display,
                        detail: "got \(got) bytes, the camera says \(expected)", isTransient: true)
                }
                if mtime > 0 {
                    var times = [
                        timespec(tv_sec: Int(mtime), tv_nsec: 0), timespec(tv_sec: Int(mtime), tv_nsec: 0),
                    ]
                    futimens(fd, &times)
                }
                guard fsync(fd) == 0 else { throw FerryError.posix(errno, operation: "sync", path: part) }
                return got
            }
            if options.overwrite == .overwrite {
                try LocalFile.rename(part, to: destination)
            } else {
                try LocalFile.renameNoReplace(part, to: destination)
            }
            return TransferResult(
                source: display, destination: destination, size: size, bytesTransferred: size,
                duration: .now - started)
        }
    }
}
