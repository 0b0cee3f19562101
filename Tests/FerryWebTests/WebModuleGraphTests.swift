import Foundation
import Testing

/// The page's ES modules form no import cycle: no module imports one that
/// imports it, directly or around a circle (issue 27 item 7). What one module
/// does for another is handed in by app.js through the bind functions.
@Suite struct WebModuleGraphTests {
    /// The page's modules, read from the source tree.
    static let webFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/FerryWeb/Web")

    /// The `./NAME.js` modules a module's text imports: static `import ... from`,
    /// bare `import '...'`, re-exports `export ... from` and dynamic `import(...)`.
    static func imports(of text: String) -> Set<String> {
        let patterns = [
            #"(?m)^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]\./([^'"]+)['"]"#,
            #"(?m)^\s*import\s*['"]\./([^'"]+)['"]"#,
            #"\bimport\(\s*['"]\./([^'"]+)['"]\s*\)"#,
        ]
        var found = Set<String>()
        for pattern in patterns {
            let regex = try! NSRegularExpression(pattern: pattern)
            let range = NSRange(text.startIndex..., in: text)
            for match in regex.matches(in: text, range: range) {
                if let r = Range(match.range(at: 1), in: text) { found.insert(String(text[r])) }
            }
        }
        return found
    }

    /// The first cycle found in `graph` (module -> modules it imports), as the
    /// modules around it with the first repeated at the end; nil when there is none.
    static func cycle(in graph: [String: Set<String>]) -> [String]? {
        enum Mark { case visiting, done }
        var marks: [String: Mark] = [:]
        var stack: [String] = []
        func visit(_ node: String) -> [String]? {
            switch marks[node] {
            case .done: return nil
            case .visiting:
                let start = stack.firstIndex(of: node)!
                return Array(stack[start...]) + [node]
            case nil: break
            }
            marks[node] = .visiting
            stack.append(node)
            for next in (graph[node] ?? []).sorted() {
                if let found = visit(next) { return found }
            }
            stack.removeLast()
            marks[node] = .done
            return nil
        }
        for node in graph.keys.sorted() {
            if let found = visit(node) { return found }
        }
        return nil
    }

    @Test func theCheckFindsCyclesDirectAndAroundACircle() {
        #expect(Self.cycle(in: ["a.js": ["b.js"], "b.js": ["c.js"], "c.js": []]) == nil)
        #expect(Self.cycle(in: ["a.js": ["b.js"], "b.js": ["a.js"]]) == ["a.js", "b.js", "a.js"])
        #expect(
            Self.cycle(in: [
                "app.js": ["list.js"], "list.js": ["viewer.js"], "viewer.js": ["x.js"], "x.js": ["list.js"],
            ])
                == ["list.js", "viewer.js", "x.js", "list.js"])
        #expect(Self.cycle(in: ["a.js": ["a.js"]]) == ["a.js", "a.js"])
    }

    @Test func theImportReaderSeesEveryForm() {
        let text = """
            import { a, b } from './one.js';
            import {
              c,
            } from "./two.js";
            import './three.js';
            export { d } from './four.js';
            const later = await import('./five.js');
            // import { not } from 'https://example.invalid/x.js';
            """
        #expect(Self.imports(of: text) == ["one.js", "two.js", "three.js", "four.js", "five.js"])
    }

    @Test func thePagesModulesImportNoCycle() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.webFolder.path)
            .filter { $0.hasSuffix(".js") }
        #expect(names.count >= 10, "\(names)")
        var graph: [String: Set<String>] = [:]
        for name in names {
            let text = try String(contentsOf: Self.webFolder.appendingPathComponent(name), encoding: .utf8)
            graph[name] = Self.imports(of: text)
            // Every module imported exists.
            for imported in graph[name]! { #expect(names.contains(imported), "\(name) imports \(imported)") }
        }
        // The shared modules the issue asked for carry the folder's state, and the list
        // no longer imports the modules that act on it.
        #expect(graph["viewer.js"]?.contains("list.js") == false)
        #expect(graph["list.js"]?.isDisjoint(with: ["viewer.js", "changes.js", "importer.js"]) == true)
        let found = Self.cycle(in: graph)
        #expect(found == nil, "import cycle: \(found?.joined(separator: " -> ") ?? "")")
    }
}
