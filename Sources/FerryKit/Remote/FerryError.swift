// Re-exported: `FerryError.Code` is an `ErrorCode`, whose words (`description`) a
// program that imports FerryKit reads.
@_exported import FerryErrorCode
import Foundation

/// Every failure Ferry reports: what went wrong, on which file or URL, and the
/// server's own reply where there was one.
///
/// URLs inside an error are always redacted; passwords never appear.
public struct FerryError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The kind of failure. Compare with the static members (`.notFound`, ...).
    ///
    /// `Code` is a struct, not an enum (`ErrorCode`), so that a later FerryKit
    /// may add codes without breaking your build: a `switch` over codes needs a
    /// `default:` case, and `==` or `case .notFound:` patterns work as for an enum.
    /// Its `description` is the kind in words: "not found", "login failed" ...
    ///
    /// ```swift
    /// switch error.code {
    /// case .notFound: print("no such file")
    /// case .authenticationFailed: print("wrong password")
    /// default: print(error)
    /// }
    /// ```
    public typealias Code = ErrorCode<FerryError>  // its codes: the extension below

    /// The kind of failure.
    public var code: Code
    /// What Ferry was doing: "download", "list", "upload" ...
    public var operation: String?
    /// The file or (redacted) URL concerned.
    public var target: String?
    /// The server's status or reply code (HTTP 404, FTP 550), when there was one.
    public var serverCode: Int?
    /// The server's reason or reply text, when there was one.
    public var serverText: String?
    /// Further detail a person can act on.
    public var detail: String?
    /// Whether retrying later may succeed (connection reset, timeout, 5xx, 421).
    public var isTransient: Bool
    /// What the caller can do about it, when there is a choice to make
    /// (`destinationExists`: replace or keep). An app offers it as buttons, the
    /// command line as its options; ``description`` says it in plain words.
    public var recovery: Recovery?
    /// The connection was refused outright (nothing listening), as opposed to
    /// one that was reset, cut or answered with nothing: the download driver
    /// gives up at once on a refusal before the first byte and retries the rest.
    var wasRefused = false

    /// Creates an error.
    public init(
        _ code: Code, operation: String? = nil, target: String? = nil, serverCode: Int? = nil,
        serverText: String? = nil, detail: String? = nil, isTransient: Bool = false, recovery: Recovery? = nil
    ) {
        self.code = code
        self.operation = operation
        self.target = target
        self.serverCode = serverCode
        self.serverText = serverText
        self.detail = detail
        self.isTransient = isTransient
        self.recovery = recovery
    }

    /// One line for a person: "download http://host/a.bin: 404 Not Found".
    public var description: String {
        var parts: [String] = []
        if let operation { parts.append(operation) }
        if let target { parts.append(target) }
        var head = parts.joined(separator: " ")
        var reason: String
        if let serverCode {
            reason = "\(serverCode)"
            if let serverText, !serverText.isEmpty { reason += " \(serverText)" }
        } else if let serverText, !serverText.isEmpty {
            reason = serverText
        } else {
            reason = code.description
        }
        let notes = [detail, recovery?.description].compactMap { $0 }.filter { !$0.isEmpty }
        if !notes.isEmpty { reason += " (" + notes.joined(separator: "; ") + ")" }
        if head.isEmpty { return reason }
        head += ": " + reason
        return head
    }

    /// The same line as `description`, for `localizedDescription`.
    public var errorDescription: String? { description }

    /// A choice the caller can make about an error, independent of any user
    /// interface: the command line turns it into its options, an app into buttons.
    public enum Recovery: String, Sendable, Hashable, CustomStringConvertible {
        /// The destination exists: replace it, or keep it and go on.
        case replaceOrKeep
        /// The new name of a rename is taken: replace what is there (nothing
        /// was changed).
        case replace
        /// The server's certificate did not verify: trust the CA that issued it,
        /// or skip verification (only for a server you know).
        case trustCertificateOrSkipVerification
        /// An SSH server's host key is not known yet: if it is the server's key,
        /// accept and record it (`HostKeyPolicy.acceptNew`).
        case acceptNewHostKey

        /// The choice in plain words.
        public var description: String {
            switch self {
            case .replaceOrKeep: "replace it or keep it"
            case .replace: "replace it, or choose another name"
            case .trustCertificateOrSkipVerification:
                "trust the CA that issued it, or skip verification only for a server you know"
            case .acceptNewHostKey: "if that is the server's key, accept it to record it"
            }
        }
    }

    /// Returns a copy with the operation and target filled in where they were missing.
    public func context(operation: String? = nil, target: String? = nil) -> FerryError {
        var e = self
        if e.operation == nil { e.operation = operation }
        if e.target == nil { e.target = target }
        return e
    }

    /// Turns any error into a `FerryError`, for code that calls something
    /// throwing `any Error` (Foundation, a callback) inside a `throws(FerryError)` function:
    ///
    /// ```swift
    /// do { try FileManager.default.removeItem(atPath: path) } catch {
    ///     throw FerryError.wrap(error, operation: "delete", target: path)
    /// }
    /// ```
    ///
    /// - A `FerryError` stays itself; only a missing operation and target are filled in.
    /// - `CancellationError` becomes `.cancelled`.
    /// - A POSIX error (`POSIXError`, `NSPOSIXErrorDomain`) gets the codes of a
    ///   failed system call on a local file: `.diskFull` for no space,
    ///   `.localIO` otherwise, with the system's text.
    /// - A Foundation file error (`CocoaError`, as `FileManager` throws):
    ///   `.notFound` for a missing file, `.permissionDenied` for no
    ///   permission, `.diskFull` for no space, `.destinationExists`
    ///   for a name that is taken, `.localIO` for the rest.
    /// - Anything else is `.unexpected`, its own description in ``detail``.
    ///
    /// - Parameters:
    ///   - error: The error to turn into a `FerryError`.
    ///   - operation: What Ferry was doing ("delete"), when the error does not say.
    ///   - target: The file or (redacted) URL concerned, when the error does not say.
    /// - Returns: The `FerryError`.
    public static func wrap(_ error: any Error, operation: String? = nil, target: String? = nil)
        -> FerryError
    {
        if let e = error as? FerryError { return e.context(operation: operation, target: target) }
        if error is CancellationError {
            return FerryError(.cancelled, operation: operation, target: target)
        }
        if let e = error as? POSIXError {
            return posix(e.code.rawValue, operation: operation, target: target)
        }
        let ns = error as NSError
        if ns.domain == NSPOSIXErrorDomain {
            return posix(Int32(truncatingIfNeeded: ns.code), operation: operation, target: target)
        }
        if ns.domain == NSCocoaErrorDomain, let file = cocoaFileError(CocoaError.Code(rawValue: ns.code)) {
            // Foundation keeps the system call's errno underneath: its words are the plainer ones.
            let underlying = (ns.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }.flatMap {
                $0.domain == NSPOSIXErrorDomain ? Int32(truncatingIfNeeded: $0.code) : nil
            }
            let target = target ?? cocoaPath(ns)
            if file.code == .localIO, let underlying {
                return posix(underlying, operation: operation, target: target)
            }
            return FerryError(
                file.code, operation: operation, target: target,
                serverText: underlying.map { String(cString: strerror($0)) } ?? ns.localizedDescription,
                detail: file.detail)
        }
        return FerryError(
            .unexpected, operation: operation, target: target,
            detail: "\(type(of: error)): \(String(describing: error))")
    }

    /// The code and advice for a Foundation file error; nil for one that is not about files.
    private static func cocoaFileError(_ code: CocoaError.Code) -> (code: Code, detail: String?)? {
        switch code {
        case .fileNoSuchFile, .fileReadNoSuchFile: return (.notFound, nil)
        case .fileReadNoPermission: return (.permissionDenied, "no permission to read it")
        case .fileWriteNoPermission, .fileWriteVolumeReadOnly:
            return (.permissionDenied, "choose a writable destination")
        case .fileWriteOutOfSpace: return (.diskFull, "free some space and try again")
        case .fileWriteFileExists: return (.destinationExists, nil)
        default:
            return CocoaError(code).isFileError ? (.localIO, nil) : nil
        }
    }

    /// The path a Foundation file error names, when it names one.
    private static func cocoaPath(_ error: NSError) -> String? {
        if let path = error.userInfo[NSFilePathErrorKey] as? String { return path }
        return (error.userInfo[NSURLErrorKey] as? URL)?.path
    }

    /// An error from a failed POSIX call on a local file.
    static func posix(_ errno: Int32, operation: String, path: String) -> FerryError {
        posix(errno, operation: operation, target: path)
    }

    private static func posix(_ errno: Int32, operation: String?, target: String?) -> FerryError {
        let text = String(cString: strerror(errno))
        switch errno {
        case ENOSPC, EDQUOT:
            return FerryError(
                .diskFull, operation: operation, target: target, serverText: text,
                detail: "free some space; the partial file is kept and the same download resumes from it")
        case EACCES, EPERM, EROFS:
            return FerryError(
                .localIO, operation: operation, target: target, serverText: text,
                detail: "choose a writable destination")
        default:
            return FerryError(.localIO, operation: operation, target: target, serverText: text)
        }
    }
}

/// The codes of ``FerryError``.
extension FerryError.Code {
    /// The URL could not be parsed.
    public static var invalidURL: Self { Self("invalid URL") }
    /// The URL scheme is not one Ferry speaks.
    public static var unsupportedScheme: Self { Self("unsupported scheme") }
    /// A name or folder template (`NameTemplate`) could not be read: an
    /// unknown token, an unclosed brace.
    public static var invalidTemplate: Self { Self("invalid template") }
    /// The backend cannot do this operation at all (for example, delete over HTTP).
    public static var unsupportedOperation: Self { Self("unsupported operation") }
    /// The remote file or folder does not exist (404, 550).
    public static var notFound: Self { Self("not found") }
    /// The server refused access (403, 550 permission denied).
    public static var permissionDenied: Self { Self("permission denied") }
    /// Wrong user or password (401, 530).
    public static var authenticationFailed: Self { Self("login failed") }
    /// Could not connect: refused, unreachable, or the name did not resolve.
    public static var connectionFailed: Self { Self("connection failed") }
    /// The server stopped sending or did not answer in time.
    public static var timedOut: Self { Self("timed out") }
    /// A card (or server) that repeatedly did not answer (503, silence).
    public static var notAnswering: Self { Self("not answering") }
    /// The server answered with an error status not covered above (5xx, other 4xx).
    public static var serverError: Self { Self("server error") }
    /// The server broke the protocol (bad Content-Range, unparsable reply).
    public static var protocolError: Self { Self("protocol error") }
    /// TLS handshake or certificate verification failed.
    public static var tls: Self { Self("TLS error") }
    /// An SSH server's host key is unknown or changed (not in `known_hosts`).
    public static var hostKeyRejected: Self { Self("host key not trusted") }
    /// No space left on the local disk.
    public static var diskFull: Self { Self("disk full") }
    /// A local file could not be read, written or renamed.
    public static var localIO: Self { Self("local file error") }
    /// The destination exists and the overwrite policy forbids replacing it.
    public static var destinationExists: Self { Self("destination exists") }
    /// The transfer was cancelled.
    public static var cancelled: Self { Self("cancelled") }
    /// The transferred file did not match its expected size or checksum.
    public static var verificationFailed: Self { Self("verification failed") }
    /// A folder listing could not be read.
    public static var badListing: Self { Self("unreadable listing") }
    /// A folder could not be removed because it is not empty.
    public static var directoryNotEmpty: Self { Self("folder not empty") }
    /// A file is larger than the caller's limit for reading it into memory.
    public static var tooLarge: Self { Self("over the size limit") }
    /// A failure Ferry has no code for: an error from outside Ferry (a
    /// callback, a system library) that `FerryError.wrap(_:operation:target:)`
    /// could not place. The error's `detail` holds its own description.
    public static var unexpected: Self { Self("unexpected error") }
}
