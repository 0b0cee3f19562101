import Foundation

/// SFTP version 3 on the wire (draft-ietf-secsh-filexfer-02, the version
/// OpenSSH's `sftp-server` speaks): packets as `uint32 length, byte type,
/// uint32 request id, ...`, strings as `uint32 length, bytes`, big-endian.
/// Pure: requests are built into bytes, replies read from bytes; the channel
/// (`SSHSubsystemChannel`) moves them.
enum SFTPWire {
    /// The protocol version Ferry asks for and reads.
    static let version: UInt32 = 3

    /// Packet types.
    enum Kind: UInt8, Sendable {
        case initialize = 1
        case version = 2
        case open = 3
        case close = 4
        case read = 5
        case write = 6
        case lstat = 7
        case fstat = 8
        case setstat = 9
        case fsetstat = 10
        case opendir = 11
        case readdir = 12
        case remove = 13
        case mkdir = 14
        case rmdir = 15
        case realpath = 16
        case stat = 17
        case rename = 18
        case readlink = 19
        case symlink = 20
        case status = 101
        case handle = 102
        case data = 103
        case name = 104
        case attrs = 105
        case extended = 200
        case extendedReply = 201
    }

    /// Status codes (`SSH_FX_*`).
    enum Status {
        static let ok: UInt32 = 0
        static let eof: UInt32 = 1
        static let noSuchFile: UInt32 = 2
        static let permissionDenied: UInt32 = 3
        static let failure: UInt32 = 4
        static let badMessage: UInt32 = 5
        static let opUnsupported: UInt32 = 8
    }

    /// `SSH_FXF_*` open flags.
    enum OpenFlags {
        static let read: UInt32 = 0x01
        static let write: UInt32 = 0x02
        static let append: UInt32 = 0x04
        static let create: UInt32 = 0x08
        static let truncate: UInt32 = 0x10
        static let exclusive: UInt32 = 0x20
    }

    /// The largest packet Ferry accepts from a server: OpenSSH's own limit
    /// (`SFTP_MAX_MSG_LENGTH`, 256 KiB) with room for servers that send more.
    static let maxPacket = 1 << 20 + 1024

    /// File attributes (`ATTRS`): each field present when its flag was sent.
    struct Attributes: Sendable, Hashable {
        var size: UInt64?
        var uid: UInt32?
        var gid: UInt32?
        var permissions: UInt32?
        var accessTime: UInt32?
        var modificationTime: UInt32?

        static let sizeFlag: UInt32 = 0x1
        static let uidGidFlag: UInt32 = 0x2
        static let permissionsFlag: UInt32 = 0x4
        static let timesFlag: UInt32 = 0x8
        static let extendedFlag: UInt32 = 0x8000_0000

        /// The file type from the permission bits (`S_IFMT`), nil when not sent.
        var kind: RemoteEntry.Kind? {
            guard let p = permissions else { return nil }
            switch p & 0o170000 {
            case 0o100000: return .file
            case 0o040000: return .directory
            case 0o120000: return .symlink
            default: return .other
            }
        }
    }

    /// Builds one request packet.
    struct Request {
        private(set) var bytes: [UInt8]

        /// A request of `kind` with request id `id` (`initialize` has none: its
        /// `id` is the version).
        init(_ kind: Kind, id: UInt32) {
            bytes = [0, 0, 0, 0, kind.rawValue]
            bytes.reserveCapacity(64)
            u32(id)
        }

        mutating func u32(_ v: UInt32) {
            bytes += [UInt8(v >> 24), UInt8((v >> 16) & 0xff), UInt8((v >> 8) & 0xff), UInt8(v & 0xff)]
        }

        mutating func u64(_ v: UInt64) {
            u32(UInt32(v >> 32))
            u32(UInt32(v & 0xffff_ffff))
        }

        mutating func string<S: Collection>(_ s: S) where S.Element == UInt8 {
            u32(UInt32(s.count))
            bytes += s
        }

        mutating func string(_ s: String) { string(Array(s.utf8)) }

        mutating func attributes(_ a: Attributes) {
            var flags: UInt32 = 0
            if a.size != nil { flags |= Attributes.sizeFlag }
            if a.uid != nil && a.gid != nil { flags |= Attributes.uidGidFlag }
            if a.permissions != nil { flags |= Attributes.permissionsFlag }
            if a.accessTime != nil && a.modificationTime != nil { flags |= Attributes.timesFlag }
            u32(flags)
            if let s = a.size { u64(s) }
            if let u = a.uid, let g = a.gid {
                u32(u)
                u32(g)
            }
            if let p = a.permissions { u32(p) }
            if let at = a.accessTime, let mt = a.modificationTime {
                u32(at)
                u32(mt)
            }
        }

        /// The packet with its length in front.
        var packet: [UInt8] {
            var b = bytes
            let n = UInt32(b.count - 4)
            b[0] = UInt8(n >> 24)
            b[1] = UInt8((n >> 16) & 0xff)
            b[2] = UInt8((n >> 8) & 0xff)
            b[3] = UInt8(n & 0xff)
            return b
        }
    }

    /// Reads the fields of one reply (the bytes after the length).
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        private(set) var at = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        var remaining: Int { bytes.count - at }

        mutating func u8() throws(SFTPWire.Malformed) -> UInt8 {
            guard remaining >= 1 else { throw Malformed() }
            defer { at += 1 }
            return bytes[at]
        }

        mutating func u32() throws(SFTPWire.Malformed) -> UInt32 {
            guard remaining >= 4 else { throw Malformed() }
            defer { at += 4 }
            return UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8
                | UInt32(bytes[at + 3])
        }

        mutating func u64() throws(SFTPWire.Malformed) -> UInt64 {
            let hi = try u32()
            return UInt64(hi) << 32 | UInt64(try u32())
        }

        /// A string's bytes, in place.
        mutating func string() throws(SFTPWire.Malformed) -> UnsafeRawBufferPointer {
            let n = Int(try u32())
            guard n <= remaining else { throw Malformed() }
            defer { at += n }
            return UnsafeRawBufferPointer(rebasing: bytes[at..<(at + n)])
        }

        mutating func text() throws(SFTPWire.Malformed) -> String {
            String(decoding: try string(), as: UTF8.self)
        }

        mutating func attributes() throws(SFTPWire.Malformed) -> Attributes {
            let flags = try u32()
            var a = Attributes()
            if flags & Attributes.sizeFlag != 0 { a.size = try u64() }
            if flags & Attributes.uidGidFlag != 0 {
                a.uid = try u32()
                a.gid = try u32()
            }
            if flags & Attributes.permissionsFlag != 0 { a.permissions = try u32() }
            if flags & Attributes.timesFlag != 0 {
                a.accessTime = try u32()
                a.modificationTime = try u32()
            }
            if flags & Attributes.extendedFlag != 0 {
                let count = try u32()
                for _ in 0..<count {
                    _ = try string()
                    _ = try string()
                }
            }
            return a
        }
    }

    /// A status reply's fields, kept.
    struct StatusReply: Error, Sendable, Hashable {
        var code: UInt32
        var message: String
    }

    /// A reply that does not hold what its type says.
    struct Malformed: Error {}

    /// One reply, read from a packet's bytes (type first). `data` is in place:
    /// valid as long as the packet's buffer is.
    enum Reply {
        case version(UInt32, extensions: [String: String])
        case status(id: UInt32, code: UInt32, message: String)
        case handle(id: UInt32, [UInt8])
        case data(id: UInt32, UnsafeRawBufferPointer)
        case name(id: UInt32, [(name: [UInt8], longName: [UInt8], attributes: Attributes)])
        case attrs(id: UInt32, Attributes)
        /// The reply's own fields, in place.
        case extendedReply(id: UInt32, UnsafeRawBufferPointer)

        init(_ packet: UnsafeRawBufferPointer) throws(SFTPWire.Malformed) {
            var r = Reader(packet)
            let type = try r.u8()
            if type == Kind.version.rawValue {
                let v = try r.u32()
                var ext: [String: String] = [:]
                while r.remaining > 0 {
                    let k = try r.text()
                    ext[k] = try r.text()
                }
                self = .version(v, extensions: ext)
                return
            }
            let id = try r.u32()
            switch type {
            case Kind.status.rawValue:
                let code = try r.u32()
                // Version 3 servers send a message and a language tag; some send neither.
                let message = r.remaining > 0 ? try r.text() : ""
                self = .status(id: id, code: code, message: message)
            case Kind.handle.rawValue:
                self = .handle(id: id, Array(try r.string()))
            case Kind.data.rawValue:
                self = .data(id: id, try r.string())
            case Kind.name.rawValue:
                let count = try r.u32()
                guard Int(count) <= r.remaining / 12 else { throw Malformed() }
                var names: [(name: [UInt8], longName: [UInt8], attributes: Attributes)] = []
                names.reserveCapacity(Int(count))
                for _ in 0..<count {
                    let n = Array(try r.string())
                    let l = Array(try r.string())
                    names.append((n, l, try r.attributes()))
                }
                self = .name(id: id, names)
            case Kind.attrs.rawValue:
                self = .attrs(id: id, try r.attributes())
            case Kind.extendedReply.rawValue:
                self = .extendedReply(id: id, UnsafeRawBufferPointer(rebasing: packet[r.at...]))
            default:
                throw Malformed()
            }
        }

        /// The request id the reply answers (0 for `version`).
        var id: UInt32 {
            switch self {
            case .version: 0
            case .status(let id, _, _), .handle(let id, _), .data(let id, _), .name(let id, _), .attrs(let id, _),
                .extendedReply(let id, _):
                id
            }
        }
    }
}
