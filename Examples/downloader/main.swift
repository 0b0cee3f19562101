// downloader URL DEST: downloads with progress lines, pauses after a third,
// resumes, and ends with "completed" or "failed" and the reason. Run it again
// after Ctrl-C: it continues from the bytes already on disk.
//
//   swift run downloader https://example.org/big.iso ~/Downloads/big.iso
import FerryKit
import Foundation

guard CommandLine.arguments.count == 3 else {
    print("usage: downloader URL DEST")
    exit(2)
}
let url: RemoteURL
do {
    url = try RemoteURL(parsing: CommandLine.arguments[1])
} catch {
    print("failed: \(error)")
    exit(2)
}
let transfer = Ferry.download(url, to: CommandLine.arguments[2])
var paused = false
var lastPercent = -1
for await p in transfer.progress {
    let percent = Int((p.fraction ?? 0) * 100)
    if percent / 10 != lastPercent / 10 {
        print(
            "progress \(percent)% \(p.bytesDone)/\(p.totalBytes.map(String.init) ?? "?") bytes, \(Int(p.bytesPerSecond)) B/s"
        )
        lastPercent = percent
    }
    if !paused, let fraction = p.fraction, fraction >= 1.0 / 3, fraction < 1 {
        paused = true
        transfer.pause()
        print("paused at \(p.bytesDone) bytes")
        try? await Task.sleep(for: .seconds(1))
        transfer.resume()
        print("resumed")
    }
}
do {
    let result = try await transfer.result
    print("completed: \(result.size) bytes in \(result.duration), \(result.bytesTransferred) transferred")
} catch {
    print("failed: \(error)")
    exit(1)
}
