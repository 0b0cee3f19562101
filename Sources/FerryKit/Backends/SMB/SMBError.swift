import CSMBClient
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension SMBContext {
    /// A failed libsmbclient call in words: libsmbclient turns the server's NT
    /// status into an `errno`; this names the status it stands for, what it means
    /// and what to do. An `EACCES` or `ENOENT` is told apart by asking once more
    /// on the same context (the server's share list for a login, the share itself
    /// for a missing share), so "wrong user name or password" and "no such share"
    /// are said only when they are so.
    func error(_ code: Int32, operation: String, target: String, path: String) -> FerryError {
        unproven = true  // the next job may connect again: it runs alone (SMBConnection.run)
        return meaning(of: code, operation: operation, path: path).context(operation: operation, target: target)
    }

    /// The error an `errno` stands for, without the operation and target.
    private func meaning(of code: Int32, operation: String, path: String) -> FerryError {
        let share = SMBPath.share(of: path)
        switch code {
        case ENOENT:
            if let share, !shareExists(share) {
                return FerryError(
                    .notFound, serverText: "NT_STATUS_BAD_NETWORK_NAME",
                    detail: "no such share \"\(share)\" on \(key.host); `ferry ls smb://\(key.host)/` lists the shares")
            }
            return FerryError(.notFound, serverText: "NT_STATUS_OBJECT_NAME_NOT_FOUND")
        case EACCES, EPERM:
            if !loginAccepted() {
                return FerryError(
                    .authenticationFailed, serverText: "NT_STATUS_LOGON_FAILURE",
                    detail: key.user.isEmpty
                        ? "the server wants a user name and password: smb://USER@\(key.host)/..., FERRY_PASSWORD or ~/.netrc"
                        : "wrong user name or password for \(key.user)")
            }
            return FerryError(
                .permissionDenied, serverText: "NT_STATUS_ACCESS_DENIED",
                detail: key.user.isEmpty
                    ? "a guest may not do this here; log in as a user who may (smb://USER@\(key.host)/...)"
                    : "\(key.user) may not do this here; ask the server's owner for the rights")
        case EBUSY, ETXTBSY:
            return FerryError(
                .serverError, serverText: "NT_STATUS_SHARING_VIOLATION",
                detail: "another program has the file open; close it and try again", isTransient: true)
        case ENOSPC, EDQUOT:
            return FerryError(
                .diskFull, serverText: "NT_STATUS_DISK_FULL",
                detail: "the share is full (or the user's quota is used up); free some space on it")
        case EEXIST:
            return FerryError(.destinationExists, serverText: "NT_STATUS_OBJECT_NAME_COLLISION")
        case ENOTEMPTY:
            return FerryError(
                .directoryNotEmpty, serverText: "NT_STATUS_DIRECTORY_NOT_EMPTY", detail: "remove what it holds first")
        case ENOTDIR:
            return FerryError(.notFound, serverText: "NT_STATUS_NOT_A_DIRECTORY")
        case EISDIR:
            return FerryError(.localIO, serverText: "NT_STATUS_FILE_IS_A_DIRECTORY", detail: "is a folder; name a file")
        case EROFS:
            return FerryError(
                .permissionDenied, serverText: "NT_STATUS_MEDIA_WRITE_PROTECTED", detail: "the share is read-only")
        case ECONNREFUSED:
            return FerryError(
                .connectionFailed, serverText: "connection refused",
                detail: "nothing answers SMB on \(key.host) port \(key.port); is the server on, and SMB turned on?")
        case EHOSTUNREACH, ENETUNREACH, EHOSTDOWN:
            return FerryError(.connectionFailed, serverText: String(cString: strerror(code)), isTransient: true)
        case ETIMEDOUT:
            return FerryError(.timedOut, serverText: "NT_STATUS_IO_TIMEOUT", isTransient: true)
        case ECONNRESET, ECONNABORTED, EPIPE, ENOTCONN, EIO, ENETRESET:
            return FerryError(
                .connectionFailed,
                serverText: code == EIO ? "NT_STATUS_CONNECTION_DISCONNECTED" : String(cString: strerror(code)),
                detail: "the connection to the server dropped", isTransient: true)
        case EINVAL where share == nil && operation != "list":
            return FerryError(.unsupportedOperation, detail: "name a share: smb://\(key.host)/SHARE/...")
        default:
            return FerryError(.serverError, serverText: String(cString: strerror(code)))
        }
    }

    /// Whether the share is there: it opens as a folder, or refuses for another reason than its name.
    private func shareExists(_ share: String) -> Bool {
        guard let c = try? context(operation: "", target: "") else { return true }
        if let d = ferry_smb_opendir(c, wire("/" + share)) {
            ferry_smb_closedir(c, d)
            return true
        }
        return errno != ENOENT
    }

    /// Whether the server accepts this login: its share list (IPC$) opens.
    private func loginAccepted() -> Bool {
        guard let c = try? context(operation: "", target: "") else { return true }
        if let d = ferry_smb_opendir(c, wire("/")) {
            ferry_smb_closedir(c, d)
            return true
        }
        return errno != EACCES && errno != EPERM
    }
}

/// `/share/dir/name` as SMB sees it.
enum SMBPath {
    /// The share, nil at the server's root.
    static func share(of path: String) -> String? {
        path.split(separator: "/", maxSplits: 1).first.map(String.init)
    }

    /// The path with one leading `/` and no trailing one.
    static func normalize(_ path: String) -> String { RemotePath.normalize(path) }
}
