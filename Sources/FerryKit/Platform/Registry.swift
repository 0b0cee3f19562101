import Synchronization

/// Objects kept for the process's life, one per key, made on first use: the
/// per-server pools and workers that own threads or connections (SMB's
/// `SMBServer`, SFTP's `SFTPChannelPool`, a camera's `CameraWorker`), so every
/// file system value naming the same server shares them.
final class Registry<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let all = Mutex<[Key: Value]>([:])

    init() {}

    /// The value for `key`, made by `make` (under the registry's lock) the first time.
    func value(for key: Key, make: () -> Value) -> Value {
        all.withLock { all in
            if let v = all[key] { return v }
            let v = make()
            all[key] = v
            return v
        }
    }
}
