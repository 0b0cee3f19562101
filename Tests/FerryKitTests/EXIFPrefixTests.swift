import FerryTestSupport
import Foundation
import Testing

@testable import FerryKit

/// `EXIFThumbnail.prefixLengthNeeded` and `fetch(reading:)`: how far a thumbnail
/// search reads, on good and hostile input.
struct EXIFPrefixTests {
    /// SOI, a comment segment of `payload` bytes, then the sample JPEG after its SOI.
    static func withComment(_ payload: Int) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xFE, UInt8((payload + 2) >> 8), UInt8((payload + 2) & 0xFF)]
            + [UInt8](repeating: 0x20, count: payload) + SampleJPEG.withThumbnail().dropFirst(2)
    }

    @Test func aPrefixHoldingTheExifBlockNeedsNoMore() {
        let jpeg = SampleJPEG.withThumbnail()
        #expect(EXIFThumbnail.prefixLengthNeeded(forJPEGPrefix: jpeg) == nil)
        // Cut inside the APP1 segment: exactly its end is asked for.
        let app1End = 4 + (Int(jpeg[4]) << 8 | Int(jpeg[5]))
        #expect(EXIFThumbnail.prefixLengthNeeded(forJPEGPrefix: jpeg.prefix(40)) == app1End)
        #expect(EXIFThumbnail.prefixLengthNeeded(forJPEGPrefix: [0x00, 0x01, 0x02]) == nil, "not a JPEG")
    }

    @Test func aSegmentBeforeExifMakesTheReadGrowOnce() async throws {
        let file = Self.withComment(65_500) + [UInt8](repeating: 0x11, count: 200_000)  // image data after
        var reads: [Range<Int64>] = []
        let t = try await EXIFThumbnail.fetch { range in
            reads.append(range)
            let end = min(Int(range.upperBound), file.count)
            return Data(file[Int(range.lowerBound)..<end])
        }
        #expect(t.map { Array($0.jpeg) } == SampleJPEG.thumbnail)
        #expect(reads.count == 2 && reads[0] == 0..<65_536, "\(reads)")
        #expect(reads.last!.upperBound <= Int64(EXIFThumbnail.maximumPrefixLength))
    }

    @Test func hostilePrefixesNeverAskPast256KiB() async throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var bytes = [UInt8](repeating: 0, count: Int.random(in: 2..<600, using: &generator))
            for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255, using: &generator) }
            bytes[0] = 0xFF
            bytes[1] = 0xD8
            if let need = EXIFThumbnail.prefixLengthNeeded(forJPEGPrefix: bytes) {
                #expect(need > 0 && need <= EXIFThumbnail.maximumPrefixLength)
            }
        }
        // A file of back-to-back maximal segments: the search stops at 256 KiB.
        var chain: [UInt8] = [0xFF, 0xD8]
        while chain.count < 1 << 20 { chain += [0xFF, 0xE2, 0xFF, 0xFF] + [UInt8](repeating: 1, count: 0xFFFD) }
        var total = 0
        let t = try await EXIFThumbnail.fetch { range in
            let end = min(Int(range.upperBound), chain.count)
            total += end - Int(range.lowerBound)
            return Data(chain[Int(range.lowerBound)..<end])
        }
        #expect(t == nil && total <= EXIFThumbnail.maximumPrefixLength, "\(total)")
    }
}
