#!/usr/bin/env bash
# Builds FerryKit's documentation with the toolchain's DocC into a static site,
# and fails on any DocC warning or on a public symbol without a doc comment.
#
#   scripts/docs.sh        -> .build/docs/site (open index.html through any static web server)
#
# Symbol graphs come from a build of FerryKit in its own scratch folder
# (.build/docs), so the flags do not invalidate the normal debug build.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build/docs
graphs=$scratch/symbol-graphs
site=$scratch/site
# The graphs are written only when FerryKit compiles: keep them between runs.
rm -rf "$site"
mkdir -p "$graphs"
swift build --target FerryKit --scratch-path "$scratch" \
  -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs" >"$scratch/build.log" 2>&1 ||
  { cat "$scratch/build.log"; exit 1; }
python3 scripts/doc-coverage.py "$graphs"
# The code in the articles and the README's library section compiles.
snippets=$scratch/snippets
rm -rf "$snippets"
python3 scripts/doc-snippets.py "$snippets"
for f in "$snippets"/*.swift; do
  swiftc -typecheck -suppress-warnings -module-name DocSnippets "$f" -I "$scratch/debug/Modules" \
    -Xcc -fmodule-map-file="$scratch/debug/CFerryOS.build/module.modulemap" -Xcc -I -Xcc Sources/CFerryOS/include \
    -Xcc -fmodule-map-file=Sources/CCurl/module.modulemap -Xcc -fmodule-map-file=Sources/CSQLite/module.modulemap \
    -Xcc -fmodule-map-file=Sources/CCrypto/module.modulemap -Xcc -fmodule-map-file=Sources/CGPhoto2/module.modulemap \
    -Xcc -fmodule-map-file=Sources/CXML2/module.modulemap -Xcc -I/usr/include/libxml2 \
    -Xcc -fmodule-map-file=Sources/CSMBClient/module.modulemap -Xcc -I/usr/include/samba-4.0
done
docc convert Sources/FerryKit/FerryKit.docc \
  --additional-symbol-graph-dir "$graphs" \
  --fallback-display-name FerryKit --fallback-bundle-identifier org.ferry.FerryKit \
  --transform-for-static-hosting --warnings-as-errors \
  --output-dir "$site" 2>&1 | tee "$scratch/docc.log"
# The site's root opens the FerryKit page (DocC's own root page is its app's 404);
# every page has an index.html of its own, so this one only redirects.
cat >"$site/index.html" <<'HTML'
<!doctype html>
<meta charset="utf-8">
<title>FerryKit</title>
<meta http-equiv="refresh" content="0; url=documentation/ferrykit/">
<link rel="canonical" href="documentation/ferrykit/">
<p><a href="documentation/ferrykit/">FerryKit documentation</a></p>
HTML
if grep -qE "warning:|error:" "$scratch/docc.log"; then
  echo "docs: DocC reported problems (above)" >&2
  exit 1
fi
echo "docs: $site ($(find "$site" -type f | wc -l) files), 0 warnings"
