import FerryCard
import FerryKit
import FerryWeb
import Foundation

/// `ferry demo`: sample photos on a card, and the browser UI on it.
enum DemoCommand: Command {
    enum Keys {
        static let host = ValueOption(
            "host", help: "address of the browser UI", valueName: "ADDR", default: "127.0.0.1")
        static let port = ValueOption(
            "port", short: "p", help: "port of the browser UI", default: 0, note: "a free one", in: 0...65535)
        static let photos = ValueOption("photos", help: "how many photos to make", default: 12, in: 1...2000)
    }

    static let spec = CommandSpec(
        name: "demo",
        summary: "sample photos and the browser UI, to try Ferry at once",
        usage: "ferry demo [--host 127.0.0.1] [--port N] [--photos N]",
        options: [Keys.host, Keys.port, Keys.photos],
        minPositionals: 0, maxPositionals: 0,
        details: """
            Makes a temporary card folder with generated photos (real JPEGs with Exif
            thumbnails in DCIM/100FERRY and DCIM/101FERRY, and a text file), serves it
            with the FlashAir card emulator (as `ferry card` does), starts the browser
            UI on that card (as `ferry serve flashair://...` does, importing into
            imported/ in that folder) and prints the address to open. Ctrl-C stops
            both and deletes the folder.
            """)

    static func run(_ args: ParsedArguments, console: Console) async throws -> Int32 {
        let host = try args.value(Keys.host)
        let port = try args.value(Keys.port)
        let photos = try args.value(Keys.photos)
        // From here on Ctrl-C stops the demo cleanly, folder included.
        let stop = StopRequest()
        defer { stop.remove() }
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var layout = SamplePhotos.Layout()
        let first = (photos * 2 + 2) / 3
        layout.folders = [("100FERRY", first), ("101FERRY", photos - first)].filter { $0.count > 0 }
        if !args.has(CommonOptions.quiet) {
            console.error("ferry demo: making \(photos) sample photos in \(folder)/card")
        }
        try SamplePhotos.populate(folder: folder + "/card", layout: layout)
        if stop.isRequested { return 0 }

        // The card emulator on a free loopback port, and the browser UI on it.
        let card = try FlashAirCard(folder: folder + "/card")
        var configuration = WebConfiguration(
            source: try RemoteURL(parsing: "flashair://127.0.0.1/"), host: host, port: port)
        configuration.cacheDirectory = folder + "/cache"
        configuration.importDirectory = folder + "/imported"
        do {
            try card.start()
            configuration.source = try RemoteURL(parsing: card.cardURL)
        } catch {
            throw FerryError(.connectionFailed, operation: "demo", target: "card", detail: "\(error)")
        }
        defer { card.stop() }
        let server = try WebServer(configuration: configuration)
        do {
            try server.start()
        } catch {
            throw FerryError(.connectionFailed, operation: "demo", target: "\(host):\(port)", detail: "\(error)")
        }
        defer { server.stop() }
        if !args.has(CommonOptions.quiet) {
            console.error("ferry demo: FlashAir card emulator at \(card.httpURL)")
            console.error("ferry demo: the page imports into \(folder)/imported")
        }
        console.out("ferry demo: open \(server.openURL)\n")
        await stop.wait()
        return 0
    }

    /// A new private folder under the system's temporary folder.
    static func makeTemporaryFolder() throws -> String {
        var base = NSTemporaryDirectory()
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        var template = Array((base + "/ferry-demo-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw FerryError(
                .localIO, operation: "demo", target: NSTemporaryDirectory(),
                serverText: String(cString: strerror(errno)))
        }
        return String(cString: made)
    }
}
