import Foundation

/// The entries of one folder listing, and how many lines could not be read: what
/// FTP's `LIST`/`MLSD` and SFTP's `ls -l`-style listings give
/// (``FTPFileSystem/listing(_:)``, ``SFTPFileSystem/listing(_:)``).
public struct DirectoryListing: Sendable, Hashable {
    /// The entries in server order. `.`, `..` and MLSD `cdir`/`pdir` lines never appear.
    public var entries: [RemoteEntry]
    /// Lines that were neither an entry nor known noise (blank lines, `total N`, `.`, `..`,
    /// `cdir`, `pdir`): a bad month, an impossible date, a malformed fact, an unknown format.
    public var skippedLines: Int

    /// Creates a listing.
    public init(entries: [RemoteEntry] = [], skippedLines: Int = 0) {
        self.entries = entries
        self.skippedLines = skippedLines
    }
}

extension DirectoryListing {
    /// Reads `ls -l`-style lines (SFTP's listing, FTP's `LIST`): the one
    /// reader of them, `FTPListingParser.parseLIST`, which also takes the DOS
    /// and NetWare styles a line may be in.
    static func parseLongListing(_ text: String, folder: String, now: Date) -> DirectoryListing {
        FTPListingParser.parseLIST(text, folder: folder, now: now)
    }

    /// How a listing is tried again: `get -r` lists several folders at once, and
    /// one refused listing (a server's limit on connections) would fail the tree.
    static let retries = RetryPolicy(firstDelay: .milliseconds(250), maxInRow: 4)

    /// Runs a listing, trying a transient failure again as `retries` says (FTP's
    /// and SFTP's listings); `display` names the folder in a cancel's error.
    static func retrying(
        _ display: String, _ once: () async throws(FerryError) -> DirectoryListing
    ) async throws(FerryError) -> DirectoryListing {
        try await retries.retrying(cancelled: FerryError(.cancelled, operation: "list", target: display), once)
    }
}
