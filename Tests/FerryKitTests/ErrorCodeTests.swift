import FerryKit
import Testing

/// `FerryError.Code` (an `ErrorCode`): a code is its words, so every code has
/// words of its own, and codes compare and match as an enum's cases would.
struct ErrorCodeTests {
    static let all: [FerryError.Code] = [
        .invalidURL, .unsupportedScheme, .invalidTemplate, .unsupportedOperation, .notFound, .permissionDenied,
        .authenticationFailed, .connectionFailed, .timedOut, .notAnswering, .serverError, .protocolError, .tls,
        .hostKeyRejected, .diskFull, .localIO, .destinationExists, .cancelled, .verificationFailed, .badListing,
        .directoryNotEmpty, .tooLarge, .unexpected,
    ]

    @Test func everyCodeHasWordsOfItsOwn() {
        let words = Self.all.map(\.description)
        #expect(Set(words).count == Self.all.count, "\(words)")
        #expect(Set(Self.all).count == Self.all.count)
        #expect(!words.contains(""))
    }

    @Test func codesMatchAsCasesAndSayTheirWords() {
        let code = FerryError(.authenticationFailed).code
        switch code {
        case .notFound: Issue.record("matched another code")
        case .authenticationFailed: break
        default: Issue.record("matched no code")
        }
        #expect(code == .authenticationFailed && code != .permissionDenied)
        #expect("\(code)" == "login failed")
        #expect(FerryError(.hostKeyRejected).description == "host key not trusted")
    }
}
