import FerryServer

/// An answer decided before the backend is asked (bad path, bad body), thrown
/// out of a handler's body.
struct APIRefusal: Error {
    /// The answer to send.
    var response: HTTPResponse

    init(_ response: HTTPResponse) {
        self.response = response
    }

    /// A JSON error with our own message.
    init(_ status: Int, _ message: String) {
        response = .failure(status, message)
    }
}
