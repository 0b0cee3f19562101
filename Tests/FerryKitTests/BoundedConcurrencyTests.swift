import Synchronization
import Testing

@testable import FerryKit

/// `forEachConcurrently` and `concurrentMap`: never more than `width` at once, a
/// window rather than batches, results in order, and no new start after `each`
/// said stop.
struct BoundedConcurrencyTests {
    /// Counts the items running at once and the most there ever were.
    final class Gauge: Sendable {
        private let state = Mutex((now: 0, most: 0))
        func enter() {
            state.withLock {
                $0.now += 1
                $0.most = max($0.most, $0.now)
            }
        }
        func leave() { state.withLock { $0.now -= 1 } }
        var most: Int { state.withLock { $0.most } }
    }

    /// Polls `condition` every millisecond for up to `limit`; whether it came true.
    static func wait(upTo limit: Duration = .seconds(10), until condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while !condition() {
            if ContinuousClock.now > deadline { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return true
    }

    @Test(arguments: [1, 3, 8])
    func theWindowFillsToTheWidthAndNoFurther(width: Int) async {
        let gauge = Gauge()
        // Each item holds its place until `width` items ran at once: with fewer
        // places the items wait out the limit and `most` stays below the width.
        _ = await Array(0..<24).concurrentMap(width: width) { _ in
            gauge.enter()
            _ = await Self.wait(upTo: .seconds(5)) { gauge.most >= width }
            gauge.leave()
        }
        #expect(gauge.most == width)
    }

    @Test func resultsComeInTheItemsOrder() async {
        // Later items finish first: the order of the results is the items', not theirs.
        let results = await Array(0..<12).concurrentMap(width: 4) { i in
            try? await Task.sleep(for: .milliseconds(2 * (12 - i)))
            return i * i
        }
        #expect(results == (0..<12).map { $0 * $0 })
    }

    @Test func aSlowItemDoesNotHoldBackTheOthers() async {
        // Width 2: item 0 holds its place until items 1...5 have all passed through
        // the other one. In batches of two, item 2 could not start before item 0
        // ended: item 0 would wait out its limit and end second.
        let finished = Mutex<[Int]>([])
        _ = await Array(0..<6).concurrentMap(width: 2) { i in
            if i == 0 { _ = await Self.wait { finished.withLock { $0.count } == 5 } }
            finished.withLock { $0.append(i) }
        }
        #expect(finished.withLock { $0 } == [1, 2, 3, 4, 5, 0])
    }

    @Test func noNewStartAfterEachSaysStop() async {
        let started = Mutex(0)
        var handed: [Int] = []
        let count = await forEachConcurrently(Array(0..<20), width: 3) { i in
            started.withLock { $0 += 1 }
            return i
        } each: { i in
            handed.append(i)
            return handed.count < 5
        }
        // Three at first, one more for each of the first four results, none after the fifth.
        #expect(count == 7)
        #expect(started.withLock { $0 } == 7)
        #expect(handed.count == 7, "the running ones are still handed over")
        #expect(Set(handed).count == 7)
    }

    @Test func nothingOrAWidthBelowOne() async {
        #expect(await [Int]().concurrentMap(width: 8) { $0 }.isEmpty)
        #expect(await [1, 2, 3].concurrentMap(width: 0) { $0 + 1 } == [2, 3, 4])
        #expect(await forEachConcurrently([Int](), width: 4, { $0 }, each: { _ in true }) == 0)
    }
}
