import Testing

@testable import FerryKit

/// How many transfers at once a web server gets for its round trip
/// (`RoundTripWidth`), without a server.
struct RoundTripWidthTests {
    @Test func aFarServerGetsTwiceTheDefaultOnceEnoughAnswersSaySo() {
        var w = RoundTripWidth(base: 4, most: 8)
        for _ in 0..<3 { w.record(.milliseconds(40)) }
        // Three answers say nothing yet.
        #expect(w.width == 4 && w.roundTrip == nil)
        w.record(.milliseconds(40))
        #expect(w.width == 8 && w.roundTrip == .milliseconds(40))
    }

    @Test func aNearServerKeepsTheDefaultAndOneSlowAnswerChangesNothing() {
        var w = RoundTripWidth(base: 4, most: 8)
        for ms in [1, 2, 1, 300, 1, 2, 1, 1] { w.record(.milliseconds(ms)) }
        #expect(w.width == 4)
        // Wi-Fi's 6 ms round trip: 4 at once fill the link already.
        var wifi = RoundTripWidth(base: 4, most: 8)
        for _ in 0..<8 { wifi.record(.milliseconds(7)) }
        #expect(wifi.width == 4)
    }

    @Test func theWidthFollowsTheLastAnswersBackDown() {
        var w = RoundTripWidth(base: 4, most: 8)
        for _ in 0..<8 { w.record(.milliseconds(45)) }
        #expect(w.width == 8)
        for _ in 0..<5 { w.record(.milliseconds(2)) }
        #expect(w.width == 4)
    }

    @Test func theMostIsACap() {
        var w = RoundTripWidth(base: 6, most: 8)
        for _ in 0..<8 { w.record(.milliseconds(50)) }
        #expect(w.width == 8)
        #expect(RoundTripWidth(base: 0, most: 0).base == 1)
    }
}
