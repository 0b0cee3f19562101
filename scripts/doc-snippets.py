#!/usr/bin/env python3
"""Writes the Swift code of the DocC articles and of the README's library section
into one file each, so scripts/docs.sh can type-check them against FerryKit.

Usage: scripts/doc-snippets.py OUT_DIR
The blocks of one page are joined into one function body (a page's examples
build on each other); top-level declarations (an `actor`) are moved out of it.
"""
import glob
import os
import re
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
pages = {path: open(path).read() for path in sorted(glob.glob("Sources/FerryKit/FerryKit.docc/*.md"))}
readme = open("README.md").read()
pages["README.md"] = readme[readme.index("## Library") : readme.index("## Layout")]
for path, text in pages.items():
    body, declarations = [], []
    for block in re.findall(r"```swift\n(.*?)```", text, re.S):
        block = block.replace("import FerryKit\n", "")
        # A type declared in an example, up to its closing brace at column 0.
        for decl in re.findall(r"^(?:actor|struct|final class|class|enum) .*?^}\n", block, re.S | re.M):
            declarations.append(decl)
            block = block.replace(decl, "")
        body.append(block)
    name = os.path.splitext(os.path.basename(path))[0]
    with open(os.path.join(out, name + ".swift"), "w") as f:
        f.write("import FerryKit\nimport Foundation\n\n")
        f.write("".join(declarations))
        f.write("\nfunc example() async throws {\n" + "".join(body) + "}\n")
print(f"doc-snippets: {len(pages)} pages")
