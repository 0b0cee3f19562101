import Foundation

/// A camera libgphoto2 found (`gp_camera_autodetect`): its model and port.
public struct DetectedCamera: Sendable, Hashable, Codable {
    /// The model as libgphoto2 names it ("Canon EOS R6").
    public var model: String
    /// The port it is on ("usb:001,004").
    public var port: String

    /// Creates a description.
    public init(model: String, port: String) {
        self.model = model
        self.port = port
    }
}

/// Which camera a `camera://` URL means, from the cameras connected: a decision
/// without libgphoto2, so every case has its own test.
///
/// `?port=` names one outright (no detection needed: the `disk:` port, a camera
/// on Wi-Fi); otherwise the first detected camera, or the first of `?model=`.
enum CameraSelection: Equatable, Sendable {
    /// Open the camera at this port with this driver (empty model: whatever answers there).
    case open(port: String, model: String)
    /// Nothing to open: why, in words.
    case none(String)

    /// The choice for a URL's `port` and `model` (empty when not given) among `detected`.
    static func choose(port: String, model: String, among detected: [DetectedCamera]) -> CameraSelection {
        if !port.isEmpty { return .open(port: port, model: model) }
        let candidates = model.isEmpty ? detected : detected.filter { matches($0.model, model) }
        if let first = candidates.first { return .open(port: first.port, model: first.model) }
        if detected.isEmpty {
            return .none(
                model.isEmpty
                    ? "no camera found: is it connected, switched on and in PTP mode?"
                    : "no camera found (none of model \"\(model)\"): is it connected, switched on and in PTP mode?")
        }
        return .none(
            "no camera of model \"\(model)\"; connected: "
                + detected.map { "\($0.model) at \($0.port)" }.joined(separator: ", "))
    }

    /// Models compare without case and surrounding spaces ("canon eos r6" finds "Canon EOS R6").
    static func matches(_ model: String, _ asked: String) -> Bool {
        model.trimmingCharacters(in: .whitespaces).lowercased()
            == asked.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// What `ferry ls camera://` shows when several cameras are connected and the URL
    /// picks none: one line per camera (model, port), and how to pick one. Nil for
    /// fewer than two cameras (the only one is listed as usual).
    static func several(_ detected: [DetectedCamera], path: String = "/") -> (table: [String], hint: String)? {
        guard detected.count >= 2 else { return nil }
        let width = detected.map(\.model.count).max() ?? 0
        let table = detected.map { $0.model.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.port }
        let first = detected[0]
        let p = path.hasPrefix("/") ? path : "/" + path
        let hint =
            "\(detected.count) cameras are connected; pick one by port or model: "
            + "camera://\(p)?port=\(RemoteURL.percentEncodeQueryValue(first.port)) or "
            + "camera://\(p)?model=\(RemoteURL.percentEncodeQueryValue(first.model))"
        return (table, hint)
    }
}

extension RemoteURL {
    /// A query value with everything but unreserved characters and `:,/` escaped (`Canon%20EOS%20R6`).
    static func percentEncodeQueryValue(_ text: String) -> String {
        percentEncode(text, allowed: unreserved.adding(":,/"))
    }
}
