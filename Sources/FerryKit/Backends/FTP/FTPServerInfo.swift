import Foundation
import Synchronization

/// What Ferry learned about one FTP server (for one login): its `FEAT` answer
/// and the login folder, plus commands it turned out to refuse.
struct FTPServerInfo: Sendable, Hashable {
    /// Feature keywords from `FEAT`, uppercased ("MLST", "SIZE", "MDTM", "REST", "UTF8").
    var features: Set<String> = []
    /// The folder the login lands in (`PWD` right after login), as the server names
    /// it: "/" on a chrooted server, "/home/ann" on one that is not.
    var entryPath: String = "/"
    /// Set when `MLSD` was refused although `FEAT` offered `MLST`: use `LIST`.
    var mlsdRefused = false
    /// Set when the server refused to rename an upload's temporary file: upload
    /// straight to the final name from then on.
    var renameRefused = false

    /// Whether listings use `MLSD` (RFC 3659 servers announce `MLST`).
    var usesMLSD: Bool { features.contains("MLST") && !mlsdRefused }
    /// Whether `stat` can ask `MLST`.
    var hasMLST: Bool { features.contains("MLST") }

    /// Reads the feature lines of a `211` reply to `FEAT`.
    static func features(fromFEAT reply: FTPReply?) -> Set<String> {
        guard let reply, reply.code == 211 else { return [] }
        var out: Set<String> = []
        // RFC 2389 indents each feature with a space; some servers do not, so every
        // line between the first and the final one ("211 End") counts.
        for line in reply.lines.dropFirst() where !line.prefix(3).allSatisfy({ $0.isASCII && $0.isNumber }) {
            let word = line.drop(while: { $0 == " " }).prefix { $0 != " " }
            if !word.isEmpty { out.insert(word.uppercased()) }
        }
        return out
    }
}

/// Process-wide cache of `FTPServerInfo`, one per server and user, so `FEAT` is
/// asked once per server per process, and concurrent first uses share one probe.
final class FTPServerInfoCache: Sendable {
    static let shared = FTPServerInfoCache()

    /// A finished probe, or the task of one in flight. Guarded by the Mutex.
    private enum Slot {
        case ready(FTPServerInfo)
        case probing(Task<FTPServerInfo, any Error>)
    }
    private let slots = Mutex<[String: Slot]>([:])

    /// The info for `key`, probing once when unknown. A failed probe is not kept,
    /// so the next call tries again (the server may have been down).
    func info(
        for key: String, probe: @escaping @Sendable () async throws(FerryError) -> FTPServerInfo
    ) async throws(FerryError) -> FTPServerInfo {
        let task: Task<FTPServerInfo, any Error> = slots.withLock { slots in
            switch slots[key] {
            case .ready(let info):
                return Task { info }
            case .probing(let t):
                return t
            case nil:
                let t = Task<FTPServerInfo, any Error> { try await probe() }
                slots[key] = .probing(t)
                return t
            }
        }
        do {
            let info = try await task.value
            slots.withLock { slots in
                if case .probing = slots[key] { slots[key] = .ready(info) }
            }
            return info
        } catch {
            slots.withLock { slots in
                if case .probing(let t) = slots[key], t == task { slots[key] = nil }
            }
            throw FerryError.wrap(error)
        }
    }

    /// Records something learned later (MLSD or rename refused).
    func update(_ key: String, _ change: (inout FTPServerInfo) -> Void) {
        slots.withLock { slots in
            if case .ready(var info) = slots[key] {
                change(&info)
                slots[key] = .ready(info)
            }
        }
    }

    /// Forgets what was learned about one server (`RemoteURL.hostKey`), for every user.
    func forget(hostKey: String) {
        slots.withLock { slots in
            for key in slots.keys where key.hasPrefix(hostKey + "|") { slots[key] = nil }
        }
    }
}
