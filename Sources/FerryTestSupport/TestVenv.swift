import Foundation
import Synchronization

/// The Python virtual environment the tests use for third-party tools
/// (`.build/test-venv`, as `scripts/setup.sh` makes it): created, and packages
/// installed with pip, when missing.
public enum TestVenv {
    private static let lock = Mutex(())

    /// The venv's folder.
    public static var path: String { TestProcess.packageRoot() + "/.build/test-venv" }

    /// A program inside the venv (`python`, `flashair-util`).
    public static func program(_ name: String) -> String { path + "/bin/" + name }

    /// Makes sure the venv exists and `module` imports; installs `package` with pip
    /// otherwise.
    ///
    /// - Throws: `TestServerError.missing` when python3 is absent or pip fails.
    public static func require(module: String, package: String) throws {
        try lock.withLock { _ in
            let python = program("python")
            if access(python, X_OK) != 0 {
                let system = try TestProcess.require("python3", missing: "python3")
                let made = try TestProcess.run(system, ["-m", "venv", path])
                guard made.status == 0 else { throw TestServerError.missing("python3 -m venv: \(made.stderr)") }
            }
            if try TestProcess.run(python, ["-c", "import \(module)"]).status == 0 { return }
            let pip = try TestProcess.run(python, ["-m", "pip", "install", "-q", package])
            guard pip.status == 0 else { throw TestServerError.missing("pip install \(package): \(pip.stderr)") }
        }
    }
}
