import Synchronization

/// A bounded free list of expensive things to make (libcurl easy handles, write
/// buffers), shared by all transfers: `take` reuses one when there is one,
/// `give` keeps it for the next taker up to `capacity`, else discards it.
///
/// `@unchecked Sendable`: the resources are raw pointers, each owned by exactly
/// one taker at a time or by the pool (under its Mutex) in between.
final class ReusePool<Resource>: @unchecked Sendable {
    private let capacity: Int
    private let make: () -> Resource
    private let prepare: (Resource) -> Void
    private let discard: (Resource) -> Void
    private let free = Mutex<[Kept]>([])

    /// A resource in the pool: owned by the pool alone until taken.
    private struct Kept: @unchecked Sendable {
        let resource: Resource
    }

    /// - Parameters:
    ///   - prepare: Run on a resource given back, before it is kept (a reset).
    ///   - discard: Frees a resource the pool does not keep.
    init(
        capacity: Int, make: @escaping () -> Resource, prepare: @escaping (Resource) -> Void = { _ in },
        discard: @escaping (Resource) -> Void
    ) {
        self.capacity = capacity
        self.make = make
        self.prepare = prepare
        self.discard = discard
    }

    func take() -> Resource {
        if let kept = free.withLock({ $0.popLast() }) { return kept.resource }
        return make()
    }

    func give(_ resource: Resource) {
        prepare(resource)
        let kept = free.withLock { list -> Bool in
            guard list.count < capacity else { return false }
            list.append(Kept(resource: resource))
            return true
        }
        if !kept { discard(resource) }
    }
}
