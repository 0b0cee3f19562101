#!/usr/bin/env python3
"""Checks from a symbol graph that every public FerryKit symbol has a doc comment.

Usage: scripts/doc-coverage.py GRAPH_DIR
Counts the public and open symbols in FerryKit*.symbols.json (the module's own,
and its extensions of other modules' types). A symbol is documented when it has
a doc comment of its own or inherits one (a protocol requirement's). Symbols the
compiler synthesized (`::SYNTHESIZED::`, or without a source location: a
Codable or RawRepresentable conformance) carry no source to document and are skipped.
Prints the undocumented ones with file and line, and exits 1 unless all are documented.
"""
import glob
import json
import os
import sys

graphs = sorted(glob.glob(os.path.join(sys.argv[1], "FerryKit*.symbols.json")))
if not graphs:
    sys.exit(f"doc-coverage: no FerryKit symbol graph in {sys.argv[1]}")
total, missing = 0, []
for path in graphs:
    with open(path) as f:
        graph = json.load(f)
    for symbol in graph["symbols"]:
        if symbol.get("accessLevel") not in ("public", "open"):
            continue
        if "::SYNTHESIZED::" in symbol["identifier"]["precise"] or "location" not in symbol:
            continue  # made by the compiler (Codable, RawRepresentable), no source to document
        total += 1
        lines = symbol.get("docComment", {}).get("lines", [])
        if any(line.get("text", "").strip() for line in lines):
            continue
        location = symbol.get("location", {})
        where = location.get("uri", "?").split("/Sources/")[-1]
        line = location.get("position", {}).get("line", 0) + 1
        name = ".".join(symbol.get("pathComponents", [])) or symbol["names"]["title"]
        missing.append(f"  {where}:{line}: {name}")
documented = total - len(missing)
percent = 100.0 * documented / total if total else 100.0
print(f"doc-coverage: {documented} of {total} public symbols documented ({percent:.1f}%)")
for m in sorted(missing):
    print(m)
sys.exit(1 if missing else 0)
