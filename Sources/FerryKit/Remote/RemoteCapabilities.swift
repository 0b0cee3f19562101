import Foundation

/// What a source can do beyond the operations every ``RemoteFileSystem`` has.
///
/// Check before calling, instead of testing which backend is behind an
/// `any RemoteFileSystem`; a call whose capability is missing throws
/// `FerryError` `unsupportedOperation` naming the source and the operation.
///
/// ```swift
/// let fs = try Ferry.fileSystem(for: url)
/// if fs.capabilities.contains(.cardInfo) { print(try await fs.info().firmware ?? "?") }
/// ```
public struct RemoteCapabilities: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The bits of the set.
    public let rawValue: Int

    /// Creates a set from its raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// ``RemoteFileSystem/count(_:)`` is answered by the source in one request
    /// (a card's op=101) instead of a listing. `count` works everywhere.
    public static let nativeCount = RemoteCapabilities(rawValue: 1 << 0)
    /// ``RemoteFileSystem/thumbnail(_:)`` comes from the source itself (a card's
    /// `thumbnail.cgi`), not from reading the file's first bytes.
    public static let sourceThumbnails = RemoteCapabilities(rawValue: 1 << 1)
    /// ``RemoteFileSystem/info()`` answers: the source is a card.
    public static let cardInfo = RemoteCapabilities(rawValue: 1 << 2)
    /// ``RemoteFileSystem/lastWriteTime()`` and ``RemoteFileSystem/hasChanged()`` answer.
    public static let changeDetection = RemoteCapabilities(rawValue: 1 << 3)
    /// ``RemoteFileSystem/data(at:range:)`` reads a range without reading the
    /// file before it (and with it, thumbnails from the first bytes).
    public static let rangeReads = RemoteCapabilities(rawValue: 1 << 4)
    /// The source wants one request at a time (a card): run transfers one by one.
    public static let oneConnection = RemoteCapabilities(rawValue: 1 << 5)

    /// Every capability by name, in declaration order.
    static let named: [(RemoteCapabilities, String)] = [
        (.nativeCount, "nativeCount"), (.sourceThumbnails, "sourceThumbnails"), (.cardInfo, "cardInfo"),
        (.changeDetection, "changeDetection"), (.rangeReads, "rangeReads"), (.oneConnection, "oneConnection"),
    ]

    /// The members by name, as an array literal would list them: `[.rangeReads, .oneConnection]`.
    public var description: String {
        var names = RemoteCapabilities.named.filter { contains($0.0) }.map { "." + $0.1 }
        let known = RemoteCapabilities.named.reduce(into: RemoteCapabilities()) { $0.formUnion($1.0) }
        let rest = rawValue & ~known.rawValue
        if rest != 0 { names.append("RemoteCapabilities(rawValue: \(rest))") }
        return "[" + names.joined(separator: ", ") + "]"
    }
}

extension RemoteFileSystem {
    /// No optional capabilities.
    public var capabilities: RemoteCapabilities { [] }

    /// Counts by listing the folder: a missing folder throws `notFound` as `list` does.
    public func count(_ path: String) async throws(FerryError) -> Int {
        do {
            return try await list(path).count { !$0.isHidden }
        } catch {
            var e = error.context(operation: "count", target: url.with(path: path).redacted)
            e.operation = "count"
            throw e
        }
    }

    /// Throws `unsupportedOperation`: only cards describe themselves.
    public func info() async throws(FerryError) -> FlashAirInfo {
        throw unsupportedCapability("info", "card facts (only a FlashAir card has them)")
    }

    /// Throws `unsupportedOperation`: the source cannot tell when it was written.
    public func lastWriteTime() async throws(FerryError) -> Duration {
        throw unsupportedCapability("last write", "change detection; list again to see changes")
    }

    /// Throws `unsupportedOperation`: the source cannot tell whether it changed.
    public func hasChanged() async throws(FerryError) -> Bool {
        throw unsupportedCapability("changed", "change detection; list again to see changes")
    }

    /// Nil: the source names no storage medium.
    public func mediumIdentifier() async throws(FerryError) -> String? { nil }

    /// Nil: the source cannot tell whether it accepts changes.
    public func acceptsChanges() async throws(FerryError) -> Bool? { nil }

    /// The file system itself.
    public func forChangePolling(interval: Duration) -> any RemoteFileSystem { self }

    func unsupportedCapability(_ operation: String, _ what: String) -> FerryError {
        FerryError(
            .unsupportedOperation, operation: operation, target: url.redacted,
            detail: "\(url.scheme.rawValue):// sources have no \(what)")
    }
}
