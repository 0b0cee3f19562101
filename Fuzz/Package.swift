// swift-tools-version:6.0
//
// Fuzz targets for every parser that reads outside input (docs/RELIABILITY.md).
//
// A package of its own so the main `swift build` never compiles it: the
// library targets are symbolic links to ../Sources, and each fuzz target is an
// executable whose entry point is `LLVMFuzzerTestOneInput` (libFuzzer supplies
// `main`). Build and run through scripts/fuzz.sh, which passes
// `--sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address`: SwiftPM's flag makes
// the executables libFuzzer programs, and the extra swiftc flag puts both
// coverage and ASan into every module (swiftc keeps only the last `-sanitize=`,
// so SwiftPM's `--sanitize=fuzzer --sanitize=address` compiles without
// coverage). A plain `swift build` here cannot link.
import PackageDescription

/// Fuzz target name -> the Ferry modules it needs.
let fuzzers: [(String, [Target.Dependency])] = [
    ("FlashAirListing", ["FerryKit"]),
    ("FlashAirReply", ["FerryKit"]),
    ("FTPList", ["FerryKit"]),
    ("FTPMLSD", ["FerryKit"]),
    ("FTPReplies", ["FerryKit"]),
    ("RemoteURL", ["FerryKit"]),
    ("HTTPHeaderLines", ["FerryKit"]),
    ("ContentRange", ["FerryKit"]),
    ("ContentDisposition", ["FerryKit"]),
    ("EXIFThumbnail", ["FerryKit"]),
    ("CaptureDate", ["FerryKit"]),
    ("CR3Boxes", ["FerryKit"]),
    ("HEIFMeta", ["FerryKit"]),
    ("WebDAVMultistatus", ["FerryKit"]),
    ("ServerQuery", ["FerryServer"]),
    ("ServerRange", ["FerryServer"]),
    ("ServerHeaderParameters", ["FerryServer"]),
    ("ServerMultipart", ["FerryServer"]),
    ("CardRequest", ["FerryCard", "FerryKit", "FerryServer"]),
    ("WebPath", ["FerryWeb", "FerryKit"]),
    ("WebAccess", ["FerryWeb", "FerryServer"]),
    ("WebRequest", ["FerryWeb", "FerryKit", "FerryServer"]),
    ("JPEGDecode", ["FerryWeb"]),
]

let package = Package(
    name: "FerryFuzz",
    platforms: [.macOS(.v15)],
    targets: [
        .systemLibrary(name: "CCurl", path: "Sources/CCurl"),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD"),
        .systemLibrary(name: "CJPEG", path: "Sources/CJPEG"),
        .systemLibrary(name: "CHeif", path: "Sources/CHeif"),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto"),
        .systemLibrary(name: "CGPhoto2", path: "Sources/CGPhoto2"),
        // libxml2's headers are under /usr/include/libxml2: pkg-config gives the path.
        .systemLibrary(name: "CXML2", path: "Sources/CXML2", pkgConfig: "libxml-2.0"),
        .systemLibrary(name: "CSMBClient", path: "Sources/CSMBClient"),
        .target(name: "CFerryOS", path: "Sources/CFerryOS"),
        .target(
            name: "FerryKit", dependencies: ["CCurl", "CFerryOS", "CSQLite", "CCrypto", "CGPhoto2", "CXML2", "CSMBClient"],
            path: "Sources/FerryKit"),
        .target(name: "FerryServer", dependencies: ["CMicroHTTPD"], path: "Sources/FerryServer"),
        .target(name: "FerryCard", dependencies: ["FerryKit", "FerryServer"], path: "Sources/FerryCard"),
        .target(
            name: "FerryWeb", dependencies: ["FerryKit", "FerryServer", "CJPEG", "CHeif"], path: "Sources/FerryWeb",
            resources: [.copy("Web")]),
        .target(name: "FuzzSupport", path: "Support"),
    ]
        + fuzzers.map { name, dependencies in
            .executableTarget(
                name: "fuzz-\(name)", dependencies: dependencies + ["FuzzSupport"], path: "Targets/\(name)")
        }
)
