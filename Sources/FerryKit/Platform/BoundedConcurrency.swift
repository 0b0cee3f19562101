/// Runs `work` on each of `items`, at most `width` at once: the first `width`
/// start together, then the next the moment one finishes (a window, not
/// batches: one slow item does not hold back the others). Each result is handed
/// to `each` on the calling task, in the order they finish; once `each` returns
/// false no more items are started (the running ones finish and are handed over).
///
/// The one bounded fan-out of Ferry: the sync engine's downloads, the CLI's
/// transfers, and its questions before a `get` (`concurrentMap`).
///
/// - Parameters:
///   - width: How many run at once; less than 1 counts as 1.
///   - work: What to do with one item (a child task each).
///   - each: Takes one result; false to start no more.
/// - Returns: How many items were started.
@discardableResult
package func forEachConcurrently<Items: Collection, Output: Sendable>(
    _ items: Items, width: Int, isolation: isolated (any Actor)? = #isolation,
    _ work: @escaping @Sendable (Items.Element) async -> Output,
    each: (Output) -> Bool
) async -> Int where Items.Element: Sendable {
    var next = items.startIndex
    var started = 0
    var more = true
    await withTaskGroup(of: Output.self, isolation: isolation) { group in
        func launch() {
            let item = items[next]
            items.formIndex(after: &next)
            started += 1
            group.addTask { await work(item) }
        }
        while started < max(1, width), next != items.endIndex { launch() }
        for await output in group {
            if !each(output) { more = false }
            if more, next != items.endIndex { launch() }
        }
    }
    return started
}

extension Collection where Element: Sendable {
    /// `map` with `transform` run concurrently, at most `width` at once
    /// (`forEachConcurrently`); the results in the collection's order.
    package func concurrentMap<T: Sendable>(
        width: Int, isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping @Sendable (Element) async -> T
    ) async -> [T] {
        var results = [T?](repeating: nil, count: count)
        await forEachConcurrently(Array(zip(results.indices, self)), width: width, isolation: isolation) { i, element in
            (i, await transform(element))
        } each: { i, result in
            results[i] = result
            return true
        }
        return results.map { $0! }
    }
}
