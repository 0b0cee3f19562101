import Foundation

extension Ferry {
    /// Removes what an unfinished download to `destination` left: `NAME.part` and
    /// `NAME.part.journal`. The destination itself is never touched.
    ///
    /// Use it for a download that will not be started again (the app forgot the
    /// file, the user said "cancel"); the same download started again would
    /// otherwise resume from these bytes.
    ///
    /// - Parameter destination: The local file the download was writing, as
    ///   passed to `download` (`~` is expanded).
    /// - Returns: True when anything was removed.
    /// - Throws: `FerryError` (`.localIO`) when a file exists but cannot be removed.
    @discardableResult
    public static func discardPartialDownload(at destination: String) throws(FerryError) -> Bool {
        let path = LocalPath.expandingTilde(destination)
        let part = path + ".part"
        var removed = false
        for file in [part, DownloadJournal.path(forPart: part)] {
            if unlink(file) == 0 {
                removed = true
            } else if errno != ENOENT {
                throw FerryError.posix(errno, operation: "discard", path: file)
            }
        }
        return removed
    }
}
