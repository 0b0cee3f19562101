import CGPhoto2
import Foundation
import Synchronization

/// One camera as libgphoto2 holds it, on a thread of its own: libgphoto2's calls
/// block and a camera serves one request at a time, so every call for this
/// camera runs on the worker's thread, one after another, and no async task
/// ever blocks on it.
final class CameraWorker: Sendable {
    /// Which camera: libgphoto2's port (`disk:/srv/folder`, `usb:001,004`) and
    /// model, empty for the first one found.
    struct Key: Hashable, Sendable {
        var port: String
        var model: String
    }

    /// The camera and context, touched only on the worker's thread.
    private final class Handle: @unchecked Sendable {
        var camera: UnsafeMutablePointer<Camera>?
        let context: OpaquePointer? = gp_context_new()
    }

    let key: Key
    private let handle = Handle()
    private let thread = SerialThread(name: "ferry.camera")

    private init(key: Key) {
        self.key = key
    }

    /// One worker per camera for the life of the process.
    private static let workers = Mutex<[Key: CameraWorker]>([:])

    static func shared(_ key: Key) -> CameraWorker {
        workers.withLock { all in
            if let w = all[key] { return w }
            let w = CameraWorker(key: key)
            all[key] = w
            return w
        }
    }

    /// Runs `body` on the worker's thread with the opened camera (opened on first use).
    func run<T: Sendable>(
        _ operation: String, target: String,
        _ body:
            @escaping @Sendable (_ camera: UnsafeMutablePointer<Camera>, _ context: OpaquePointer?) throws(FerryError)
            -> T
    ) async throws(FerryError) -> T {
        try await thread.run { [handle, key] () throws(FerryError) -> T in
            if handle.camera == nil {
                // The Directory Browse driver lists something even for a folder that is not there.
                if key.port.hasPrefix("disk:") {
                    var isDir: ObjCBool = false
                    let folder = String(key.port.dropFirst("disk:".count))
                    guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue
                    else {
                        throw FerryError(
                            .notFound, operation: operation, target: target,
                            detail: "no folder \(folder) for the disk: port")
                    }
                }
                var camera: UnsafeMutablePointer<Camera>?
                let r = ferry_gp_open(
                    key.model.isEmpty ? nil : key.model, key.port.isEmpty ? nil : key.port, handle.context, &camera)
                guard r >= GP_OK, let camera else {
                    throw CameraWorker.error(r, operation: operation, target: target, opening: key)
                }
                handle.camera = camera
            }
            return try body(handle.camera!, handle.context)
        }
    }

    /// A libgphoto2 result code in words, with what to do where there is something.
    static func error(_ code: Int32, operation: String, target: String, opening key: Key? = nil) -> FerryError {
        let words = String(cString: gp_result_as_string(code))
        switch code {
        case GP_ERROR_FILE_NOT_FOUND, GP_ERROR_DIRECTORY_NOT_FOUND:
            return FerryError(.notFound, operation: operation, target: target, serverText: words)
        case GP_ERROR_IO_USB_CLAIM, GP_ERROR_CAMERA_BUSY:
            return FerryError(
                .connectionFailed, operation: operation, target: target, serverText: words,
                detail: "the camera is in use by another program: unmount it (gio mount -u gphoto2://...) "
                    + "or close the program that holds it", isTransient: true)
        case GP_ERROR_MODEL_NOT_FOUND, GP_ERROR_UNKNOWN_PORT:
            return FerryError(
                .notFound, operation: operation, target: target, serverText: words,
                detail: key.map {
                    "no camera at port \"\($0.port)\"\($0.model.isEmpty ? "" : " of model \"\($0.model)\"")"
                }
                    ?? "no camera found: is it connected and switched on?")
        case GP_ERROR_NOT_SUPPORTED:
            return FerryError(.unsupportedOperation, operation: operation, target: target, serverText: words)
        default:
            if key != nil {
                return FerryError(
                    .connectionFailed, operation: operation, target: target, serverText: words,
                    detail: key!.port.isEmpty
                        ? "no camera found: is it connected, switched on and in PTP mode?"
                        : "no camera answers at port \"\(key!.port)\"")
            }
            return FerryError(.serverError, operation: operation, target: target, serverText: words)
        }
    }
}
