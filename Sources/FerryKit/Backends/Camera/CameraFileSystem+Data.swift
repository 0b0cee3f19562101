import CGPhoto2
import Foundation

extension CameraFileSystem {
    /// Deletes a file the camera reports as deletable (`GP_FILE_PERM_DELETE`); one it
    /// protects fails with `permissionDenied` saying so, and stays.
    public func delete(_ path: String) async throws(FerryError) {
        let p = RemotePath.normalize(path, keepingServerRoot: false)
        let display = shown(p)
        let (folder, name) = RemotePath.split(p)
        try await worker.run("delete", target: display) { session throws(FerryError) in
            var size: Int64 = -1
            var mtime: Int64 = 0
            var deletable: Int32 = -1
            let info = ferry_gp_file_info(session.open, folder, name, session.context, &size, &mtime, &deletable)
            guard info >= GP_OK else { throw session.error(info, operation: "delete", target: display) }
            guard deletable != 0 else {
                throw FerryError(
                    .permissionDenied, operation: "delete", target: display,
                    detail: "the camera reports this file as protected, so it stays: "
                        + "remove its protection on the camera to delete it")
            }
            let r = gp_camera_file_delete(session.open, folder, name, session.context)
            session.listings.changed()
            guard r >= GP_OK else { throw session.error(r, operation: "delete", target: display) }
        }
    }

    /// The photo's thumbnail from the camera's own data, without reading the photo:
    /// the Exif block (`GP_FILE_TYPE_EXIF`, the thumbnail and the orientation), else
    /// the camera's preview (`GP_FILE_TYPE_PREVIEW`, where the driver's previews are
    /// its own small images), else the first bytes by partial reads where the driver
    /// offers them (`gp_camera_file_read`); nil when none of these has one.
    public func thumbnail(_ path: String) async throws(FerryError) -> EXIFThumbnail.Thumbnail? {
        let p = RemotePath.normalize(path, keepingServerRoot: false)
        let display = shown(p)
        let (folder, name) = RemotePath.split(p)
        let found: EXIFThumbnail.Thumbnail?? = try await worker.run("thumbnail", target: display) {
            session throws(FerryError) in
            var orientation: Int?
            var exifAnswered = false
            switch CameraFileSystem.inMemory(session, folder, name, GP_FILE_TYPE_EXIF, display) {
            case .success(let exif):
                exifAnswered = true
                if let thumbnail = CameraThumbnail.fromExif(exif) { return .some(thumbnail) }
                orientation = CameraThumbnail.orientation(fromExif: exif)
            case .failure(let error):
                if error.code == .notFound || error.code == .connectionFailed { throw error }
            }
            if session.hasPreviews {
                switch CameraFileSystem.inMemory(session, folder, name, GP_FILE_TYPE_PREVIEW, display) {
                case .success(let preview):
                    if let thumbnail = CameraThumbnail.fromPreview(preview, orientation: orientation) {
                        return .some(thumbnail)
                    }
                case .failure(let error):
                    if error.code == .notFound || error.code == .connectionFailed { throw error }
                }
            }
            // A driver whose Exif answer had no thumbnail has none to give; else try partial reads.
            return exifAnswered ? .some(nil) : nil
        }
        if let found { return found }
        do {
            return try await EXIFThumbnail.fetch { range async throws(FerryError) in
                try await data(at: p, range: range)
            }
        } catch  where error.code == .unsupportedOperation {
            return nil
        } catch {
            var e = error.context(target: display)
            e.operation = "thumbnail"
            throw e
        }
    }

    /// A preview or Exif block in memory, or why not.
    private static func inMemory(
        _ session: CameraWorker.Session, _ folder: String, _ name: String, _ type: CameraFileType, _ target: String
    ) -> Result<Data, FerryError> {
        var file: OpaquePointer?
        let r = ferry_gp_get_in_memory(session.open, folder, name, type, session.context, &file)
        guard r >= GP_OK, let file else { return .failure(session.error(r, operation: "thumbnail", target: target)) }
        defer { gp_file_unref(file) }
        var data: UnsafePointer<CChar>?
        var size: UInt = 0
        guard gp_file_get_data_and_size(file, &data, &size) >= GP_OK, let data else { return .success(Data()) }
        return .success(Data(bytes: data, count: Int(size)))
    }

    /// Reads one byte range by `gp_camera_file_read` (PTP's GetPartialObject); a
    /// driver without partial reads (Directory Browse) throws `unsupportedOperation`.
    public func data(at path: String, range: Range<Int64>) async throws(FerryError) -> Data {
        let p = RemotePath.normalize(path, keepingServerRoot: false)
        let display = shown(p)
        guard range.lowerBound >= 0 else { throw FerryError.badRange(range, operation: "read", target: display) }
        if range.isEmpty { return Data() }
        let (folder, name) = RemotePath.split(p)
        return try await worker.run("read", target: display) { session throws(FerryError) in
            var bytes = Data(count: Int(range.count))
            var got = UInt64(range.count)
            let r = bytes.withUnsafeMutableBytes { raw in
                gp_camera_file_read(
                    session.open, folder, name, GP_FILE_TYPE_NORMAL, UInt64(range.lowerBound),
                    raw.baseAddress!.assumingMemoryBound(to: CChar.self), &got, session.context)
            }
            guard r >= GP_OK else {
                var e = session.error(r, operation: "read", target: display)
                if e.code == .unsupportedOperation {
                    e.detail = "this camera's driver cannot read part of a file (no gp_camera_file_read)"
                }
                throw e
            }
            return bytes.prefix(Int(min(got, UInt64(range.count))))
        }
    }

    /// Reads a whole file into memory after its size (the camera's) is checked against `limit`.
    public func data(at path: String, limit: Int) async throws(FerryError) -> Data {
        let p = RemotePath.normalize(path, keepingServerRoot: false)
        let display = shown(p)
        let (folder, name) = RemotePath.split(p)
        return try await worker.run("read", target: display) { session throws(FerryError) in
            var size: Int64 = -1
            var mtime: Int64 = 0
            var deletable: Int32 = -1
            let info = ferry_gp_file_info(session.open, folder, name, session.context, &size, &mtime, &deletable)
            guard info >= GP_OK else { throw session.error(info, operation: "read", target: display) }
            if size > Int64(max(0, limit)) {
                throw FerryError.overLimit(limit, size: size, operation: "read", target: display)
            }
            var file: OpaquePointer?
            let r = ferry_gp_get_in_memory(session.open, folder, name, GP_FILE_TYPE_NORMAL, session.context, &file)
            guard r >= GP_OK, let file else { throw session.error(r, operation: "read", target: display) }
            defer { gp_file_unref(file) }
            var data: UnsafePointer<CChar>?
            var count: UInt = 0
            guard gp_file_get_data_and_size(file, &data, &count) >= GP_OK, let data else { return Data() }
            guard Int(count) <= max(0, limit) else {
                throw FerryError.overLimit(limit, size: Int64(count), operation: "read", target: display)
            }
            return Data(bytes: data, count: Int(count))
        }
    }
}
