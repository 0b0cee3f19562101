/// A header value of the form `type; name=value; name="quoted value"`
/// (`Content-Type`, `Content-Disposition`).
struct HeaderParameters: Equatable {
    /// The part before the first `;`, lowercased and trimmed.
    var value: String
    /// Parameters in order; names lowercased, values unquoted.
    var parameters: [(name: String, value: String)]

    static func == (a: HeaderParameters, b: HeaderParameters) -> Bool {
        a.value == b.value && a.parameters.elementsEqual(b.parameters) { $0 == $1 }
    }

    /// The first parameter called `name` (lowercase).
    subscript(name: String) -> String? {
        parameters.first { $0.name == name }?.value
    }

    /// Parses `text`.
    ///
    /// Quoted strings end at the first unescaped `"`. Inside them only `\"`
    /// and `\\` are escapes; any other backslash is kept, because browsers
    /// of the Internet Explorer line send Windows paths unescaped
    /// (`filename="C:\dir\a.jpg"`). An unterminated quote runs to the end.
    init(parsing text: String) {
        var scalars = Array(text.unicodeScalars)[...]
        func skipSpaces() {
            while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        }
        func token(until stops: Set<Unicode.Scalar>) -> String {
            var out = String.UnicodeScalarView()
            while let first = scalars.first, !stops.contains(first) {
                out.append(first)
                scalars.removeFirst()
            }
            return String(out).trimmingSpaces().description
        }
        value = token(until: [";"]).lowercased()
        parameters = []
        while !scalars.isEmpty {
            scalars.removeFirst()  // ";"
            skipSpaces()
            let name = token(until: [";", "="]).lowercased()
            var parameterValue = ""
            if scalars.first == "=" {
                scalars.removeFirst()
                skipSpaces()
                if scalars.first == "\"" {
                    scalars.removeFirst()
                    var out = String.UnicodeScalarView()
                    while let first = scalars.first {
                        scalars.removeFirst()
                        if first == "\"" { break }
                        if first == "\\", let next = scalars.first, next == "\"" || next == "\\" {
                            out.append(next)
                            scalars.removeFirst()
                        } else {
                            out.append(first)
                        }
                    }
                    parameterValue = String(out)
                    _ = token(until: [";"])  // junk after the closing quote
                } else {
                    parameterValue = token(until: [";"])
                }
            }
            if !name.isEmpty { parameters.append((name, parameterValue)) }
        }
    }
}
