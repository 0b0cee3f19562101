import Testing

@testable import FerryKit

/// The decisions of WebDAV's ranged uploads (`WebDAVRangedPut`), without a server.
struct WebDAVRangedPutTests {
    typealias R = WebDAVRangedPut

    @Test func aFileLargerThanAPieceGoesInPiecesUnlessTheServerRefusedThem() {
        #expect(R.end(from: 0, size: 10, support: .unknown, piece: 4) == 4)
        #expect(R.end(from: 4, size: 10, support: .yes, piece: 4) == 8)
        #expect(R.end(from: 8, size: 10, support: .yes, piece: 4) == 10)
        // No larger than a piece, or a server without ranged PUTs: one PUT of it all.
        #expect(R.end(from: 0, size: 4, support: .unknown, piece: 4) == 4)
        #expect(R.end(from: 0, size: 10, support: .no, piece: 4) == 10)
        #expect(R.end(from: 0, size: 1 << 30, support: .unknown) == R.piece)
    }

    @Test func theAnswerSaysWhetherTheServerTakesRangedPuts() {
        // A piece whose server says no size cannot be checked.
        #expect(R.verdict(status: 201, ranged: true, offset: 4, end: 8, held: nil) == .sizeUnknown)
        #expect(R.verdict(status: 204, ranged: true, offset: 4, end: 8, held: 8) == .wrote)
        #expect(R.verdict(status: 201, ranged: false, offset: 0, end: 8, held: nil) == .wrote)
        // Written as the whole file (x/net/webdav), or refused (RFC 9110's 400, 501).
        #expect(R.verdict(status: 201, ranged: true, offset: 4, end: 8, held: 4) == .noRanges)
        for status in [400, 416, 501] {
            #expect(R.verdict(status: status, ranged: true, offset: 4, end: 8, held: nil) == .noRanges)
            // The same status to a whole file's PUT is the server's own refusal.
            #expect(R.verdict(status: status, ranged: false, offset: 0, end: 8, held: nil) == .failed)
        }
        // From the start: the piece written as the whole file is right; one
        // written into a longer leftover shows the range followed, the leftover in the way.
        #expect(R.verdict(status: 201, ranged: true, offset: 0, end: 4, held: 4) == .wrote)
        #expect(R.verdict(status: 204, ranged: true, offset: 0, end: 4, held: 9) == .leftover)
        #expect(R.verdict(status: 204, ranged: true, offset: 0, end: 4, held: 2) == .noRanges)
        // A failure of its own stays one.
        for status in [403, 409, 507] {
            #expect(R.verdict(status: status, ranged: true, offset: 4, end: 8, held: nil) == .failed)
        }
    }

    @Test func aRefusalIsFinal() {
        let memo = R.Memo()
        #expect(memo.support == .unknown)
        memo.learn(.yes)
        #expect(memo.support == .yes)
        memo.learn(.no)
        memo.learn(.yes)
        #expect(memo.support == .no)
    }
}
