// swift-tools-version:6.0
//
// Ferry: one engine (FerryKit), three faces (library, `ferry` CLI, browser UI).
//
// Dependencies are the Swift toolchain plus C libraries from Debian, wrapped
// in `C*` system-library targets:
// - libcurl (libcurl4-openssl-dev): every transfer. URLSession on Linux
//   measured at about half of libcurl's throughput with more memory, and
//   libcurl speaks HTTP(S), FTP, FTPS with resume, connection reuse and a
//   multi interface we drive from one thread.
import PackageDescription

let package = Package(
    name: "Ferry",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "FerryKit", targets: ["FerryKit"]),
        .executable(name: "ferry", targets: ["ferry"]),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // libmicrohttpd (libmicrohttpd-dev): every HTTP server (`ferry card`, `ferry serve`).
        // A mature, small C server with keep-alive, connection limits and sendfile;
        // no Swift server framework can be fetched here, and a hand-written HTTP
        // parser is exactly what we should not ship.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // SQLite (libsqlite3-dev): the import history of `ferry sync` (what was fetched
        // from which card or server). It needs keyed lookups over thousands of rows in
        // one transaction, crash safety without an fsync per file (WAL), and safe use by
        // two processes at once; a hand-rolled file format would have to reinvent all
        // three. Debian's library, like libcurl: no package to fetch.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // libjpeg-turbo (libjpeg62-turbo-dev): server-side thumbnails and the demo's sample photos.
        // Its DCT-scaled decoding (1/2..1/8) makes a thumbnail of a 12 MP photo cost a fraction of
        // a full decode. The shim header does each decode/encode in C behind setjmp, because
        // libjpeg's error_exit would otherwise end the process on a corrupt file.
        .systemLibrary(
            name: "CJPEG",
            pkgConfig: "libjpeg",
            providers: [.apt(["libjpeg62-turbo-dev"])]
        ),
        // OpenSSL's libcrypto (libssl-dev): SHA-256 for the checksum each imported file
        // gets while its bytes stream (sync's history: delete-after removes a photo from
        // a card only when its local copy still has the checksum Ferry wrote) and for SSH
        // host key fingerprints. With SHA extensions it hashes at GB/s, which no Swift
        // loop in a debug build comes near; libcurl already loads it (libcurl4-openssl).
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // libheif (libheif-dev): HEIC/HEIF photos (every iPhone since 2017, many Android phones,
        // Canon's HIF) in `ferry serve`: thumbnails from the file's own thumbnail item, previews,
        // the Exif item, orientation (libheif applies irot/imir on decode). HEIF is an ISO-BMFF
        // container around HEVC; decoding HEVC is far beyond what Ferry should write, and libheif
        // is the library every Linux viewer uses (GIMP, darktable, ImageMagick, GNOME). Debian's
        // package, like libjpeg-turbo: no package to fetch.
        // Not linked: opened on first use (Sources/CHeif/shim.h), so no pkgConfig (its -lheif);
        // the header is in the compiler's own multiarch include folder.
        .systemLibrary(
            name: "CHeif",
            providers: [.apt(["libheif-dev"])]
        ),
        // libgphoto2, for cameras over USB (PTP) and Wi-Fi (PTP/IP): the library every Linux
        // photo importer uses (Shotwell, darktable, digiKam, Rapid Photo Downloader), with drivers
        // for thousands of models that no hand-written PTP code could match, and a "Directory
        // Browse" driver that presents a folder as a camera (the tests). Debian's libgphoto2-dev.
        .systemLibrary(
            name: "CGPhoto2",
            pkgConfig: "libgphoto2",
            providers: [.apt(["libgphoto2-dev"])]
        ),
        // libsmbclient (libsmbclient-dev), Samba's client library: SMB shares (`smb://`) on
        // NAS boxes, Windows and routers. It speaks SMB2 and SMB3 with signing and encryption
        // as the server requires, NTLMv2 logins and share listing; libcurl's `smb://` speaks only
        // SMB1, which current servers turn off, and the protocol is far beyond what Ferry should
        // write. Debian's package; used through its context API, one context per thread.
        // Not linked: opened on first use (Sources/CSMBClient/shim.h; about a hundred Samba
        // libraries otherwise loaded by every process), so no pkgConfig (its -lsmbclient); the
        // shim includes the header by its folder, samba-4.0/.
        .systemLibrary(
            name: "CSMBClient",
            providers: [.apt(["libsmbclient-dev"])]
        ),
        // libqrencode (libqrencode-dev): the QR code `ferry serve --host 0.0.0.0` prints, so a
        // phone's camera opens the page with its token in one step. Encoding QR (Reed-Solomon,
        // masks, versions) is a well-kept library's job, not ours; Debian's package.
        .systemLibrary(
            name: "CQREncode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        // libxml2 (libxml2-dev): WebDAV's multistatus replies (`dav://`, `davs://`). PROPFIND answers
        // are XML with namespaces under any prefix (`D:`, `d:`, `lp1:`, none), entities and
        // encodings; a hand-written XML parser is exactly what we should not ship. Debian's
        // package, the parser GNOME, libxslt and PHP use.
        .systemLibrary(
            name: "CXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        // `ErrorCode`, the code struct of every error type (FerryError, HTTPServerError,
        // MultipartError, JPEGError), in a module of its own: FerryKit and FerryServer both use it
        // and neither may depend on the other (FerryServer would link libcurl, SQLite, libgphoto2
        // and libsmbclient for an HTTP server; FerryKit, a product, would link libmicrohttpd).
        .target(name: "FerryErrorCode"),
        // The HTTP server under `ferry card` (FlashAir emulator) and `ferry serve` (browser UI).
        .target(
            name: "FerryServer",
            dependencies: ["CMicroHTTPD", "FerryErrorCode"]
        ),
        // Linux calls Glibc's overlay hides behind _GNU_SOURCE (renameat2, syncfs, utimensat's UTIME_OMIT).
        .target(name: "CFerryOS"),
        // `ferry serve`: the browser UI (static HTML/CSS/JS shipped as resources, no build step)
        // and its JSON API over FerryKit, thumbnails, and the demo's sample photos.
        .target(
            name: "FerryWeb",
            dependencies: ["FerryKit", "FerryServer", "FerryErrorCode", "CJPEG", "CHeif"],
            resources: [.copy("Web")]
        ),
        .target(
            name: "FerryKit",
            dependencies: [
                "FerryErrorCode", "CCurl", "CFerryOS", "CSQLite", "CCrypto", "CGPhoto2", "CXML2", "CSMBClient",
            ]
        ),
        // `ferry card`: a FlashAir card emulator on the HTTP server.
        .target(
            name: "FerryCard",
            dependencies: ["FerryKit", "FerryServer"]
        ),
        // The command line's logic, as a library so its argument parser is unit-tested.
        .target(
            name: "FerryCLI",
            dependencies: ["FerryKit", "FerryCard", "FerryWeb", "CQREncode"]
        ),
        .executableTarget(
            name: "ferry",
            dependencies: ["FerryCLI"]
        ),
        // Examples/: one small program per job FerryKit is for (README, DocC
        // articles). Executable targets without a product: built and run by the
        // tests (ExamplesTests), never shipped to a package that depends on Ferry.
        .executableTarget(name: "card-browser", dependencies: ["FerryKit"], path: "Examples/card-browser"),
        .executableTarget(name: "downloader", dependencies: ["FerryKit"], path: "Examples/downloader"),
        .executableTarget(name: "ftp-client", dependencies: ["FerryKit"], path: "Examples/ftp-client"),
        .executableTarget(name: "image-loader", dependencies: ["FerryKit"], path: "Examples/image-loader"),
        // Real servers, fault injection and an in-memory file system for the tests (not a product).
        .target(
            name: "FerryTestSupport",
            dependencies: ["FerryKit"]
        ),
        .testTarget(
            name: "FerryKitTests",
            dependencies: ["FerryKit", "FerryTestSupport"],
            // Folder pages saved from real web servers (HTTPIndexParserTests).
            resources: [.copy("Resources")]
        ),
        .testTarget(
            name: "FerryServerTests",
            dependencies: ["FerryServer", "FerryTestSupport"]
        ),
        // Fuzz corpus replay, regressions from fuzzing, hostile clients, secrets (docs/RELIABILITY.md).
        .testTarget(
            name: "FerryHardeningTests",
            dependencies: ["FerryKit", "FerryServer", "FerryCard", "FerryWeb", "FerryTestSupport"]
        ),
        .testTarget(
            name: "FerryWebTests",
            dependencies: ["FerryWeb", "FerryKit", "FerryServer", "FerryTestSupport"]
        ),
        .testTarget(
            name: "FerryCLITests",
            dependencies: ["FerryCLI", "FerryKit", "FerryTestSupport"]
        ),
    ]
)

// Strict checks for every target, in one place (as swift-log does).
for target in package.targets where target.type != .system && target.name != "CFerryOS" {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
