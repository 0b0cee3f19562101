import Foundation

/// What a transfer does about what its destination already holds, as its
/// ``OverwritePolicy`` says: the one decision of every upload (FTP, SFTP, a
/// FlashAir card, the driver `ResumableUpload`) and download (`DownloadDriver`,
/// a local copy, a camera), made before any byte moves (docs/DESIGN.md,
/// "Transfers: the contract": never replace a different file without being told).
enum OverwriteDecision: Sendable, Hashable {
    /// Nothing is there, or the policy allows replacing it: write.
    case write
    /// Keep what is there: the transfer is skipped.
    case keep
    /// Refuse: the destination exists (`destinationExists`, "replace or keep").
    case refuse
    /// A folder has the name: no policy replaces a folder with a file.
    case folderInTheWay

    /// What the destination holds.
    enum Found: Sendable, Hashable {
        case nothing
        /// A file, of that size when known.
        case file(size: Int64?)
        case folder
    }

    /// The decision, pure: a folder is never replaced, a file as `policy` says.
    static func decide(_ found: Found, policy: OverwritePolicy) -> OverwriteDecision {
        switch (found, policy) {
        case (.nothing, _): .write
        case (.folder, _): .folderInTheWay
        case (.file, .overwrite): .write
        case (.file, .skip): .keep
        case (.file, .fail): .refuse
        }
    }

    /// Carries the decision out: nil to go on and write, the result of a skipped
    /// transfer, or the error of a refused one.
    ///
    /// - Parameters:
    ///   - found: What the destination holds.
    ///   - policy: The transfer's overwrite policy.
    ///   - operation: "upload", "download", "copy": for the error.
    ///   - source: The transfer's source, for the result.
    ///   - destination: The destination as shown, for the result and the error.
    ///   - started: When the transfer started, for the result's duration.
    ///   - folder: The error for a folder in the way (a local folder wants "name a file").
    static func check(
        _ found: Found, policy: OverwritePolicy, operation: String, source: String, destination: String,
        started: ContinuousClock.Instant, folder: @autoclosure () -> FerryError
    ) throws(FerryError) -> TransferResult? {
        switch decide(found, policy: policy) {
        case .write:
            return nil
        case .keep:
            var size: Int64 = 0
            if case .file(let known) = found { size = known ?? 0 }
            return TransferResult(
                source: source, destination: destination, size: size, bytesTransferred: 0, skipped: true,
                duration: .now - started)
        case .refuse:
            throw FerryError(.destinationExists, operation: operation, target: destination, recovery: .replaceOrKeep)
        case .folderInTheWay:
            throw folder()
        }
    }

    /// A remote entry (nil: none) as found at an upload's destination.
    static func found(_ entry: RemoteEntry?) -> Found {
        guard let entry else { return .nothing }
        return entry.isDirectory ? .folder : .file(size: entry.size)
    }

    /// The error for a remote folder where an upload would write a file.
    static func remoteFolder(_ destination: String) -> FerryError {
        FerryError(.destinationExists, operation: "upload", target: destination, detail: "a folder has that name")
    }
}
