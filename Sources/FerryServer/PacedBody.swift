import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A response body handed to libmicrohttpd through a content-reader callback
/// and paced to a byte rate, for emulating a slow card. (Unpaced bodies do
/// not use this: files go through `sendfile`, bytes are copied once.)
///
/// Lifetime: ``makeResponse(status:)`` passes a +1 reference as the
/// callback context; libmicrohttpd calls the free callback exactly once when
/// it destroys the response, which releases it (and closes the file).
///
/// Threading: libmicrohttpd calls the reader only on the thread of the one
/// connection that sends the response (thread-per-connection mode), so the
/// mutable state needs no lock; sleeping there stalls only that connection.
final class PacedBody {
    enum Source {
        case data(Data)
        /// Reads `fd` from `offset`; the descriptor is owned and closed here.
        case file(fd: Int32, offset: Int64)
    }

    private let source: Source
    private let length: Int64
    private let bytesPerSecond: Int
    private let stop: StopSignal
    private var start: ContinuousClock.Instant?

    init(source: Source, length: Int64, bytesPerSecond: Int, stop: StopSignal) {
        self.source = source
        self.length = length
        self.bytesPerSecond = bytesPerSecond
        self.stop = stop
    }

    deinit {
        if case .file(let fd, _) = source { Sys.close(fd) }
    }

    /// A libmicrohttpd response reading from this body.
    func makeResponse() -> OpaquePointer? {
        // About 20 slices per second keeps the pace smooth without many syscalls.
        let block = max(1, min(64 * 1024, bytesPerSecond / 20))
        let context = Unmanaged.passRetained(self).toOpaque()
        let response = MHD_create_response_from_callback(
            UInt64(length), block,
            { context, position, buffer, max in
                let body = Unmanaged<PacedBody>.fromOpaque(context!).takeUnretainedValue()
                return body.read(at: Int64(position), into: buffer!, max: max)
            },
            context,
            { context in
                Unmanaged<PacedBody>.fromOpaque(context!).release()
            })
        if response == nil { Unmanaged<PacedBody>.fromOpaque(context).release() }
        return response
    }

    /// Fills `buffer` with the bytes at `position`, after sleeping until the
    /// pace allows them to go out.
    private func read(at position: Int64, into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        guard position < length else { return FERRY_MHD_CONTENT_READER_END_OF_STREAM }
        let slice = Swift.max(1, Swift.min(max, bytesPerSecond / 20, Int(length - position)))
        let start = self.start ?? ContinuousClock.now
        self.start = start
        // The slice may leave once `position + slice` bytes fit in the elapsed time.
        let due = start + .nanoseconds(Int64((Double(position + Int64(slice)) / Double(bytesPerSecond)) * 1e9))
        guard stop.sleep(until: due) else { return FERRY_MHD_CONTENT_READER_END_WITH_ERROR }
        switch source {
        case .data(let data):
            let lower = data.startIndex + Int(position)
            data.copyBytes(
                to: UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: UInt8.self), from: lower..<(lower + slice))
            return slice
        case .file(let fd, let offset):
            while true {
                let count = pread(fd, buffer, slice, off_t(offset + position))
                if count < 0, errno == EINTR { continue }
                // 0 means the file shrank under us: end with an error, never send a short body silently.
                return count > 0 ? count : FERRY_MHD_CONTENT_READER_END_WITH_ERROR
            }
        }
    }
}
