import FerryKit
import Foundation

/// Reads a CR3 file's embedded JPEGs by range (see ``CR3`` for the layout): the
/// first 64 KiB for the Canon box (metadata and the 160 x 120 `THMB`), grown once
/// to the box's end when it is longer, then for the preview one small read of the
/// box header `CTBO` points at (or a walk of the top-level box headers after
/// `moov`) and the `PRVW` box itself. A step machine, so that reads from a file
/// and reads by range over the network share one walk.
struct CR3Reader {
    /// Which embedded JPEG to read; each falls back to the other when missing.
    enum Want: Sendable { case thumbnail, preview }
    /// What to do next.
    enum Step {
        /// Read these bytes of the file and ``feed(_:)`` them.
        case read(Range<Int>)
        /// Finished: the JPEG and its orientation, or nil when the file has none.
        case done(RawPreview.Embedded?)
    }

    /// The first read: the Canon box of every camera so far fits (20 to 70 KB).
    static let firstRead = 64 * 1024
    /// Top-level boxes walked looking for the preview (real files: ftyp, moov, XMP, PRVW).
    static let maxWalk = 16

    private enum Stage {
        case prefix
        case header(at: Int, hinted: Bool)
        case box(ISOBMFF.Box)
        case finished
    }

    let fileSize: Int
    let want: Want
    private var stage = Stage.prefix
    private var prefix: [UInt8] = []
    private var metadata: CR3.Metadata?
    private var grows = 0
    private var walked = 0

    init(fileSize: Int, want: Want) {
        self.fileSize = fileSize
        self.want = want
    }

    /// The first read to make.
    var first: Step { .read(0..<min(fileSize, Self.firstRead)) }

    /// Takes the bytes the last step asked for (fewer when the file is shorter) and says what comes next.
    mutating func feed(_ bytes: [UInt8]) -> Step {
        switch stage {
        case .prefix:
            prefix += bytes
            switch CR3.scan(prefix, fileSize: fileSize) {
            case .found(let found):
                metadata = found
                if want == .thumbnail, let thumbnail = found.thumbnail { return done(Array(prefix[thumbnail])) }
                return header(at: found.previewHint ?? found.moovEnd, hinted: found.previewHint != nil)
            case .needs(let n):
                guard n > prefix.count, n <= fileSize, grows < 2, !bytes.isEmpty else { return finish() }
                grows += 1
                return .read(prefix.count..<n)
            case .invalid:
                return finish()
            }
        case .header(let at, let hinted):
            let box = ISOBMFF.box(in: bytes, base: at, at: at, limit: fileSize)
            if let box, CR3.isPreviewBox(box), box.end - box.offset <= CR3.maxPreviewLength {
                stage = .box(box)
                return .read(box.offset..<box.end)
            }
            if hinted, let metadata { return header(at: metadata.moovEnd, hinted: false) }
            guard let box, box.end < fileSize else { return fallback() }
            return header(at: box.end, hinted: false)
        case .box(let box):
            guard bytes.count == box.end - box.offset, let jpeg = CR3.previewJPEG(in: bytes, box: box) else {
                return fallback()
            }
            return done(Array(bytes[(jpeg.lowerBound - box.offset)..<(jpeg.upperBound - box.offset)]))
        case .finished:
            return .done(nil)
        }
    }

    private mutating func header(at: Int, hinted: Bool) -> Step {
        walked += 1
        guard walked <= Self.maxWalk, at >= 0, at < fileSize else { return fallback() }
        stage = .header(at: at, hinted: hinted)
        // A uuid box header with a 64-bit size is 32 bytes.
        return .read(at..<min(fileSize, at + 32))
    }

    /// The preview is missing: the thumbnail, if any.
    private mutating func fallback() -> Step {
        guard let thumbnail = metadata?.thumbnail else { return finish() }
        return done(Array(prefix[thumbnail]))
    }

    private mutating func done(_ jpeg: [UInt8]) -> Step {
        stage = .finished
        guard jpeg.starts(with: [0xFF, 0xD8]) else { return .done(nil) }
        return .done(RawPreview.Embedded(jpeg: jpeg, header: prefix))
    }

    private mutating func finish() -> Step {
        stage = .finished
        return .done(nil)
    }
}
