// image-loader URL...: loads photos into memory one after another, as a viewer
// would when the user flips through them: asking for the next photo cancels
// the load of the previous one if it is still running. Prints each photo's
// thumbnail (from its first bytes, or the card's thumbnail.cgi) and size.
//
//   swift run image-loader https://host/a.jpg https://host/b.jpg
import FerryKit
import Foundation

actor ImageLoader {
    private var current: Task<Result<Data, FerryError>, Never>?

    func load(_ fs: any RemoteFileSystem, _ path: String) async throws(FerryError) -> Data {
        current?.cancel()  // the older request is stale
        let task = Task { () async -> Result<Data, FerryError> in
            do throws(FerryError) {
                return .success(try await fs.data(at: path, limit: 64 << 20))
            } catch {
                return .failure(error)
            }
        }
        current = task
        return try await task.value.get()
    }
}

func show(_ text: String, _ loader: ImageLoader) async {
    do {
        let url = try RemoteURL(parsing: text)
        let fs = try Ferry.fileSystem(for: url)
        let name = url.lastComponent
        if let thumbnail = try await fs.thumbnail(url.path) {
            print(
                "\(name): thumbnail \(thumbnail.jpeg.count) bytes of a \(thumbnail.width ?? 0)x\(thumbnail.height ?? 0) photo"
            )
        } else {
            print("\(name): no thumbnail")
        }
        let bytes = try await loader.load(fs, url.path)
        print("\(name): loaded \(bytes.count) bytes")
    } catch  where error.code == .cancelled {  // every FerryKit call throws FerryError: no cast
        print("\(text): cancelled, a newer photo was asked for")
    } catch {
        print("\(text): failed: \(error)")
    }
}

let urls = CommandLine.arguments.dropFirst()
guard !urls.isEmpty else {
    print("usage: image-loader URL...")
    exit(2)
}
let loader = ImageLoader()
var shown: [Task<Void, Never>] = []
for text in urls {
    shown.append(Task { await show(text, loader) })
    try? await Task.sleep(for: .milliseconds(300))  // the user flips to the next photo
}
for task in shown { await task.value }
