import CGPhoto2
import Foundation

/// What a libgphoto2 result code means for Ferry, and the error a person reads.
///
/// A camera that was opened and then fails with an I/O error (unplugged, switched
/// off, out of Wi-Fi range), or a `disk:` folder that went away, is "gone": a
/// `connectionFailed` error, which sync (`SyncEngine.isSourceGone`) and the
/// browser's imports (`ImportJob.meansSourceLost`) wait out instead of giving up
/// on the file. A camera that never answered is a mistake in the URL or a camera
/// not connected: said so, with what to check.
enum CameraFailure: Equatable, Sendable {
    /// The file or folder is not on the camera.
    case notFound
    /// Another program holds the camera (gvfs, another importer).
    case busy
    /// The camera stopped answering: unplugged, switched off, the port broke.
    case gone
    /// The driver cannot do this (a preview, a partial read, a delete).
    case unsupported
    /// No camera of that model, or at that port.
    case noCamera
    /// Anything else: the camera's own error.
    case other

    /// The meaning of a result code.
    static func of(_ code: Int32) -> CameraFailure {
        switch code {
        case GP_ERROR_FILE_NOT_FOUND, GP_ERROR_DIRECTORY_NOT_FOUND: .notFound
        case GP_ERROR_IO_USB_CLAIM, GP_ERROR_CAMERA_BUSY, GP_ERROR_IO_LOCK: .busy
        case GP_ERROR_IO, GP_ERROR_TIMEOUT, GP_ERROR_IO_INIT, GP_ERROR_IO_READ, GP_ERROR_IO_WRITE,
            GP_ERROR_IO_UPDATE, GP_ERROR_IO_USB_CLEAR_HALT, GP_ERROR_IO_USB_FIND:
            .gone
        case GP_ERROR_NOT_SUPPORTED: .unsupported
        case GP_ERROR_MODEL_NOT_FOUND, GP_ERROR_UNKNOWN_PORT: .noCamera
        default: .other
        }
    }

    /// libgphoto2's words for a result code ("Error reading from the port").
    static func words(_ code: Int32) -> String { String(cString: gp_result_as_string(code)) }

    /// The hint for a camera that is gone.
    static let goneAdvice =
        "the camera is gone (unplugged, switched off or asleep?): files that arrived are kept; "
        + "connect it again and the import goes on"

    /// The error for `code`.
    ///
    /// - Parameters:
    ///   - code: libgphoto2's result.
    ///   - said: the driver's own message for it (`gp_context_error`), when it gave one.
    ///   - opening: the camera being opened (nil for a call on an open camera).
    ///   - seenBefore: whether this camera was open before: then failing to open it again means it is gone.
    static func error(
        _ code: Int32, said: String? = nil, operation: String, target: String, opening key: CameraWorker.Key? = nil,
        seenBefore: Bool = false
    ) -> FerryError {
        let text = [words(code), said].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ": ")
        var meaning = of(code)
        if key != nil && seenBefore && meaning != .busy { meaning = .gone }
        switch meaning {
        case .notFound:
            return FerryError(.notFound, operation: operation, target: target, serverText: text)
        case .busy:
            return FerryError(
                .connectionFailed, operation: operation, target: target, serverText: text,
                detail: "the camera is in use by another program: unmount it (gio mount -u gphoto2://...) "
                    + "or close the program that holds it", isTransient: true)
        case .gone:
            if let key, !seenBefore {
                return FerryError(
                    .connectionFailed, operation: operation, target: target, serverText: text,
                    detail: notAnswering(key), isTransient: true)
            }
            return FerryError(
                .connectionFailed, operation: operation, target: target, serverText: text, detail: goneAdvice,
                isTransient: true)
        case .unsupported:
            return FerryError(
                .unsupportedOperation, operation: operation, target: target, serverText: text,
                detail: "this camera's driver cannot \(operation)")
        case .noCamera:
            return FerryError(
                .notFound, operation: operation, target: target, serverText: text,
                detail: key.map {
                    $0.port.isEmpty
                        ? "no camera of model \"\($0.model)\" is connected"
                        : "no camera at port \"\($0.port)\"\($0.model.isEmpty ? "" : " of model \"\($0.model)\"")"
                } ?? "no camera found: is it connected and switched on?")
        case .other:
            if let key {
                return FerryError(
                    .connectionFailed, operation: operation, target: target, serverText: text,
                    detail: notAnswering(key))
            }
            return FerryError(.serverError, operation: operation, target: target, serverText: text)
        }
    }

    /// What to check when a camera does not answer at all.
    static func notAnswering(_ key: CameraWorker.Key) -> String {
        if key.port.isEmpty { return "no camera found: is it connected, switched on and in PTP mode?" }
        if key.port.hasPrefix("ptpip:") {
            let address = key.port.dropFirst("ptpip:".count)
            return "no camera answers over PTP/IP at \(address): is it switched on, on this network, "
                + "with its Wi-Fi remote (PTP/IP) mode on?"
        }
        return "no camera answers at port \"\(key.port)\""
    }
}
