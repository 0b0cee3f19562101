import FerryKit
import FerryServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CardHandler {
    /// `upload.cgi`: `GET ?WRITEPROTECT=ON|OFF&UPDIR=/dir&FTIME=0x...&DEL=/path`
    /// (any combination, applied in that order) and `POST` multipart uploads.
    /// With uploads disabled everything answers 404, as on a real card.
    func upload(_ request: HTTPRequest) -> HTTPResponse {
        guard configuration.uploadEnabled else { return .status(404) }
        if request.method == "POST" { return store(request) }
        guard request.method == "GET" || request.method == "HEAD" else { return .status(405) }
        var answer = CardHandler.success
        if let mode = request.query("WRITEPROTECT") {
            guard mode == "ON" || mode == "OFF" else { return CardHandler.error }
            state.withLock { $0.writeProtected = mode == "ON" }
        }
        if let dir = request.query("UPDIR") {
            if let refused = setUploadDirectory(dir) { return refused }
        }
        if let text = request.query("FTIME") {
            guard let ftime = FATDateTime(ftime: text) else { return CardHandler.error }
            state.withLock { $0.ftime = ftime }
        }
        if let target = request.query("DEL") {
            answer = delete(target)
        }
        return answer
    }

    /// `UPDIR`: remembers the folder and creates its last level when the parent
    /// exists. Like a real card it says SUCCESS for a folder it cannot create
    /// (the POST then fails); only a path leaving the card is refused outright.
    private func setUploadDirectory(_ dir: String) -> HTTPResponse? {
        let normalized: String
        do {
            normalized = "/" + (try CardRoot.components(dir)).joined(separator: "/")
        } catch {
            return CardHandler.refused(error)
        }
        if normalized != "/" {
            do {
                _ = try root.existing(normalized)
            } catch .forbidden {
                return CardHandler.refused(.forbidden)
            } catch {
                // Missing: create the last level if its parent is there.
                do {
                    let local = try root.creatable(normalized)
                    if mkdir(local, 0o755) == 0 { state.withLock { $0.changes.recordWrite() } }
                } catch .forbidden {
                    return CardHandler.refused(.forbidden)
                } catch {
                    // No parent either: SUCCESS all the same, as a real card says.
                }
            }
        }
        state.withLock { $0.uploadDirectory = normalized }
        return nil
    }

    /// `DEL`: a file, or an empty folder. ERROR when missing or not empty.
    private func delete(_ target: String) -> HTTPResponse {
        let local: String
        do {
            local = try root.existing(target)
        } catch .forbidden {
            return CardHandler.refused(.forbidden)
        } catch {
            return CardHandler.error
        }
        // Never the root itself; and delete the link, not what it points at.
        let parts = (try? CardRoot.components(target)) ?? []
        guard !parts.isEmpty else { return CardHandler.error }
        let named = (try? root.creatable(target)) ?? local
        var st = stat()
        guard lstat(named, &st) == 0 else { return CardHandler.error }
        let ok = (st.st_mode & S_IFMT) == S_IFDIR ? rmdir(named) == 0 : unlink(named) == 0
        guard ok else { return CardHandler.error }
        state.withLock { $0.changes.recordWrite() }
        return CardHandler.success
    }

    /// `POST /upload.cgi`: stores the first part that has a `filename="..."`, under
    /// that name's last path component (tfatool sends a full local path, and
    /// names the field after it), in the `UPDIR` folder, with the `FTIME` time.
    private func store(_ request: HTTPRequest) -> HTTPResponse {
        guard case .multipart(let parts) = request.body,
            let part = parts.first(where: { $0.filename != nil }),
            let name = part.filenameLastComponent, CardHandler.isValidName(name)
        else { return CardHandler.error }
        let (folder, ftime) = state.withLock { s -> (String, FATDateTime?) in
            defer { s.ftime = nil }
            return (s.uploadDirectory, s.ftime)
        }
        let destination: String
        do throws(CardRefusal) {
            destination = try root.creatable(RemotePath.join(folder, name))
        } catch {
            return error == .forbidden ? CardHandler.refused(.forbidden) : CardHandler.error
        }
        var st = stat()
        if stat(destination, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { return CardHandler.error }
        if let other = CardHandler.caseTwin(of: name, in: LocalPath.parent(destination)) {
            // FAT names ignore case: a card cannot hold both names in one folder.
            return CardHandler.reply(
                "ERROR: \(other) is in this folder already; a FAT card cannot hold it and \(name) (names ignore case)")
        }
        guard CardHandler.place(part.content, at: destination) else { return CardHandler.error }
        // Spooled files are private (0600); a stored photo is an ordinary file.
        chmod(destination, 0o644)
        let modified = ftime?.timestamp?.date(floatingIn: .current) ?? Date()
        try? FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: destination)
        state.withLock { $0.changes.recordWrite() }
        return CardHandler.success
    }

    /// Moves (or writes) an uploaded part to `destination`, replacing a file there.
    /// The final name appears only when all bytes are in place.
    static func place(_ content: MultipartPart.Content, at destination: String) -> Bool {
        let folder = LocalPath.parent(destination)
        let temporary = folder + "/.ferry-card-upload-\(UUID().uuidString)"
        switch content {
        case .file(let path, _):
            if rename(path, destination) == 0 { return true }
            // Another file system: copy beside the destination, then rename.
            guard (try? FileManager.default.copyItem(atPath: path, toPath: temporary)) != nil else {
                unlink(temporary)
                return false
            }
        case .data(let data):
            guard FileManager.default.createFile(atPath: temporary, contents: data) else { return false }
        }
        guard rename(temporary, destination) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }

    /// The entry of `folder` whose name is `name` in another case, if any.
    static func caseTwin(of name: String, in folder: String) -> String? {
        let wanted = name.uppercased()
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).first {
            $0 != name && $0.uppercased() == wanted
        }
    }

    /// FAT long names: not empty, not `.`/`..`, no control characters or `\ / : * ? " < > |`.
    static func isValidName(_ name: String) -> Bool {
        guard !name.isEmpty, name != ".", name != "..", name.utf8.count <= 255 else { return false }
        return !name.unicodeScalars.contains { $0.value < 0x20 || "\\/:*?\"<>|".unicodeScalars.contains($0) }
    }
}
