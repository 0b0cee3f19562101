import CGPhoto2
import Foundation
import Synchronization

/// One camera as libgphoto2 holds it, on a thread of its own: libgphoto2's calls
/// block and a camera serves one request at a time, so every call for this
/// camera runs on the worker's thread, one after another, and no async task
/// ever blocks on it.
///
/// A camera that fails with an I/O error, or a `disk:` folder that is gone, is
/// closed: the next call opens it afresh (``CameraFailure``).
final class CameraWorker: Sendable {
    /// Which camera: libgphoto2's port (`disk:/srv/folder`, `usb:001,004`,
    /// `ptpip:10.0.0.5:15740`) and model, empty for the first one found.
    struct Key: Hashable, Sendable {
        var port: String
        var model: String
    }

    /// The open camera, touched only on the worker's thread.
    final class Session: @unchecked Sendable {
        fileprivate(set) var camera: UnsafeMutablePointer<Camera>?
        let context: OpaquePointer? = gp_context_new()
        /// The driver's last `gp_context_error` message, cleared before each call.
        fileprivate let messages = UnsafeMutablePointer<ferry_gp_messages>.allocate(capacity: 1)
        /// Whether the camera was open once: failing to open it again means it is gone.
        fileprivate(set) var seenBefore = false
        /// Whether the driver's previews are its own small images (`ferry_gp_has_previews`).
        fileprivate(set) var hasPreviews = false
        /// Folders listed since libgphoto2's listings were last forgotten.
        var listings = CameraListings()

        init() {
            messages.initialize(to: ferry_gp_messages())
            ferry_gp_catch_errors(context, messages)
        }

        /// What the driver said about the last failure, if anything.
        var said: String? {
            let text = withUnsafeBytes(of: &messages.pointee.text) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            return text.isEmpty ? nil : text
        }

        /// The error for a result code of a call on the open camera, with the driver's words.
        func error(_ code: Int32, operation: String, target: String) -> FerryError {
            CameraFailure.error(code, said: said, operation: operation, target: target)
        }

        /// The open camera (only inside ``CameraWorker/run(_:target:_:)``, which opened it).
        var open: UnsafeMutablePointer<Camera> { camera! }
    }

    let key: Key
    private let session = Session()
    private let thread = SerialThread(name: "ferry.camera")

    private init(key: Key) {
        self.key = key
    }

    /// One worker per camera for the life of the process.
    private static let workers = Registry<Key, CameraWorker>()

    static func shared(_ key: Key) -> CameraWorker {
        workers.value(for: key) { CameraWorker(key: key) }
    }

    /// The folder of a `disk:` port (the Directory Browse driver), nil for other ports.
    var diskFolder: String? {
        key.port.hasPrefix("disk:") ? String(key.port.dropFirst("disk:".count)) : nil
    }

    /// Runs `body` on the worker's thread with the opened camera (opened on first use).
    func run<T: Sendable>(
        _ operation: String, target: String,
        _ body: @escaping @Sendable (_ session: Session) throws(FerryError) -> T
    ) async throws(FerryError) -> T {
        try await thread.run { [self] () throws(FerryError) -> T in
            session.messages.pointee.text.0 = 0
            // The Directory Browse driver lists something even for a folder that is not
            // there (and what it listed before): the folder's absence is the camera's.
            if let folder = diskFolder, !CameraWorker.isFolder(folder) {
                if session.camera != nil || session.seenBefore {
                    close()
                    throw FerryError(
                        .connectionFailed, operation: operation, target: target,
                        detail: "no folder \(folder) for the disk: port any more; " + CameraFailure.goneAdvice,
                        isTransient: true)
                }
                throw FerryError(
                    .notFound, operation: operation, target: target, detail: "no folder \(folder) for the disk: port")
            }
            if session.camera == nil { try open(operation, target: target) }
            do throws(FerryError) {
                return try body(session)
            } catch {
                // Unplugged, switched off, out of range: open it afresh next time.
                if error.code == .connectionFailed || diskFolder.map({ !CameraWorker.isFolder($0) }) == true {
                    close()
                    if error.code != .connectionFailed {
                        var e = error
                        e.code = .connectionFailed
                        e.detail = CameraFailure.goneAdvice
                        e.isTransient = true
                        throw e
                    }
                }
                throw error
            }
        }
    }

    /// Opens the camera the key names (the first connected, or the first of a model, without a port).
    private func open(_ operation: String, target: String) throws(FerryError) {
        var port = key.port
        var model = key.model
        if port.isEmpty {
            switch CameraSelection.choose(port: "", model: model, among: try CameraWorker.detect(session.context)) {
            case .open(let p, let m):
                port = p
                model = m
            case .none(let why):
                throw FerryError(
                    session.seenBefore ? .connectionFailed : .notFound, operation: operation, target: target,
                    detail: session.seenBefore ? CameraFailure.goneAdvice : why, isTransient: session.seenBefore)
            }
        }
        var camera: UnsafeMutablePointer<Camera>?
        let r = ferry_gp_open(model.isEmpty ? nil : model, port.isEmpty ? nil : port, session.context, &camera)
        guard r >= GP_OK, let camera else {
            throw CameraFailure.error(
                r, said: session.said, operation: operation, target: target, opening: key,
                seenBefore: session.seenBefore)
        }
        session.camera = camera
        session.seenBefore = true
        session.hasPreviews = ferry_gp_has_previews(camera) != 0
        session.listings = CameraListings()
    }

    /// Closes a camera that went away.
    private func close() {
        if let camera = session.camera { ferry_gp_close(camera, session.context) }
        session.camera = nil
    }

    private static func isFolder(_ path: String) -> Bool {
        var isDir: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDir) && isDir.boolValue
    }

    /// The cameras libgphoto2 finds (`gp_camera_autodetect`; the Directory Browse driver is never among them).
    static func detect(_ context: OpaquePointer?) throws(FerryError) -> [DetectedCamera] {
        var list: OpaquePointer?
        let r = ferry_gp_autodetect(context, &list)
        guard r >= GP_OK, let list else {
            throw FerryError(
                .unexpected, operation: "detect cameras", serverText: CameraFailure.words(r),
                detail: "libgphoto2 could not look for cameras")
        }
        defer { gp_list_free(list) }
        var found: [DetectedCamera] = []
        for i in 0..<max(0, gp_list_count(list)) {
            var name: UnsafePointer<CChar>?
            var value: UnsafePointer<CChar>?
            guard gp_list_get_name(list, i, &name) >= GP_OK, gp_list_get_value(list, i, &value) >= GP_OK,
                let name, let value
            else { continue }
            found.append(DetectedCamera(model: String(cString: name), port: String(cString: value)))
        }
        return found
    }

    /// The thread autodetection runs on (it probes USB ports; never on a caller's thread).
    private static let detector = SerialThread(name: "ferry.camera-detect")
    /// Its libgphoto2 context, used on that thread only.
    private nonisolated(unsafe) static let detectContext = gp_context_new()

    /// The cameras connected now.
    static func connected() async throws(FerryError) -> [DetectedCamera] {
        try await detector.run { () throws(FerryError) in try detect(detectContext) }
    }
}

/// When to make libgphoto2 forget its listings: it keeps a folder's listing until
/// told, so a new photo would never show in a second listing (watch) and a gone
/// folder would still list. A folder listed a second time is asked afresh (all
/// listings are forgotten then); a walk over many folders lists each once.
struct CameraListings: Equatable, Sendable {
    private(set) var listed: Set<String> = []
    private(set) var stale = false

    /// Whether to forget libgphoto2's listings before listing `folder`; notes the listing.
    mutating func forgetBefore(listing folder: String) -> Bool {
        if stale || listed.contains(folder) {
            listed = [folder]
            stale = false
            return true
        }
        listed.insert(folder)
        return false
    }

    /// After a change (a delete), the next listing is asked afresh, whichever folder.
    mutating func changed() { stale = true }
}
