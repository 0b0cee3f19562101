extension UInt8 {
    /// The byte with an ASCII capital letter made small; every other byte as it
    /// is. The one case folding of protocol text (header names, URL schemes and
    /// hosts, FTP listings and replies, the card's listing): byte work, no
    /// `String` made.
    @inline(__always) var asciiLowercased: UInt8 {
        self >= 0x41 && self <= 0x5A ? self | 0x20 : self
    }
}
