/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// Order and the spelling of names are kept as received (or as added), and a
/// name may occur more than once.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral,
    CustomStringConvertible
{
    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The name as received or added, e.g. `Content-Type`.
        public var name: String
        /// The value, without surrounding whitespace.
        public var value: String

        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields in order.
    public private(set) var fields: [Field]

    /// Creates a header list from fields in order.
    public init(_ fields: [Field] = []) {
        self.fields = fields
    }

    /// Creates a header list from `(name, value)` pairs in order.
    public init(_ pairs: [(String, String)]) {
        self.fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    /// Creates a header list from a literal such as `["Content-Type": "text/plain"]`.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The value of the first field called `name` (any case), or `nil`.
    public subscript(name: String) -> String? {
        fields.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Every value of the fields called `name` (any case), in order.
    ///
    /// - Parameter name: The header name.
    /// - Returns: The values; empty when there is none.
    public func values(for name: String) -> [String] {
        let key = name.lowercased()
        return fields.filter { $0.name.lowercased() == key }.map(\.value)
    }

    /// Whether a field called `name` (any case) is present.
    public func contains(_ name: String) -> Bool {
        self[name] != nil
    }

    /// Appends a field, keeping any existing field of the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field called `name` (any case) with one field.
    public mutating func replaceOrAdd(name: String, value: String) {
        remove(name: name)
        add(name: name, value: value)
    }

    /// Removes every field called `name` (any case).
    public mutating func remove(name: String) {
        let key = name.lowercased()
        fields.removeAll { $0.name.lowercased() == key }
    }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// `Name: value` lines, one per field.
    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }
}
