import FerryCLI
import Foundation

#if canImport(Glibc)
    import Glibc

    /// glibc's malloc gives a block of 128 KiB or more its own mapping until a
    /// freed mapping teaches it a larger threshold (the mmap threshold follows the
    /// largest freed mapped block, up to 32 MiB, and the trim threshold is twice
    /// that). libcurl 7.88 allocates each transfer's receive buffer (512 KiB with
    /// Ferry's CURLOPT_BUFFERSIZE) before it connects and frees it when the
    /// transfer ends, on the engine thread: the first ones were mapped afresh, and
    /// later the engine thread's heap, whose free top then passed the 1 MiB trim
    /// threshold, was given back to the kernel and faulted in again by the next
    /// transfers. `ferry get` of 1,000 x 64 KiB: a median of 5,100-7,700 page
    /// faults per run (up to 13,000), 4,100-4,500 (up to 5,000) with this
    /// (bench/RESULTS.md, issue 19, branch mem).
    ///
    /// Freeing one 4 MiB block at start teaches glibc what it would learn on its
    /// own later: blocks up to 4 MiB come from the heap, and free memory up to
    /// 8 MiB stays there. `mallopt` or `GLIBC_TUNABLES` would fix the thresholds
    /// instead and switch off glibc's own adjustment above them (bench/RESULTS.md,
    /// issue 19: fixed thresholds mapped every receive buffer afresh).
    private func raiseMallocThresholds() {
        // posix_memalign rather than malloc: the optimizer removes an unused
        // malloc/free pair, and the point is the pair.
        var block: UnsafeMutableRawPointer?
        guard posix_memalign(&block, 16, 4 << 20) == 0 else { return }
        free(block)
    }
    raiseMallocThresholds()
#endif

exit(await CLI.main(CommandLine.arguments))
