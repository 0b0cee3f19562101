#!/usr/bin/env bash
# Builds the Debian package (scripts/package.sh) and checks it as its user gets
# it: its contents and Depends, lintian (no error), then installed with dpkg into
# a fresh temporary root: `ferry --help` and `--version` run from ROOT/usr/bin,
# `ferry serve` serves the page from ROOT/usr/share/ferry, `man -l` renders the
# page, bash completes `ferry g<TAB>` and `ferry get --ov<TAB>`, the zsh script
# parses, systemd accepts the unit, and removing the package leaves nothing.
#
#   scripts/package-test.sh              release build (minutes), package, check
#   scripts/package-test.sh --no-build   package the release build already in .build, check
#
# The release build is what makes this slow, so scripts/test.sh runs it once,
# after the test suite, and only with --package (CI passes it).
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "package-test: FAILED: $*" >&2
  exit 1
}
scripts/package.sh "$@"
deb=$(ls -t .build/deb/ferry_*.deb | head -1)
echo "package-test: checking $deb"

# Contents: everything where Debian keeps it, nothing beside the binary.
contents=$(dpkg-deb --contents "$deb")
for f in ./usr/bin/ferry ./usr/share/ferry/Web/index.html ./usr/share/ferry/Web/app.js \
  ./usr/share/man/man1/ferry.1.gz ./usr/share/bash-completion/completions/ferry \
  ./usr/share/zsh/vendor-completions/_ferry ./usr/share/fish/vendor_completions.d/ferry.fish \
  "./usr/lib/systemd/user/ferry-sync@.service" \
  ./usr/share/doc/ferry/copyright ./usr/share/doc/ferry/changelog.Debian.gz \
  ./usr/share/doc/ferry/examples/camera.conf; do
  grep -q " $f\$" <<<"$contents" || fail "$deb has no $f"
done
if grep -q "Ferry_FerryWeb.resources" <<<"$contents"; then fail "SwiftPM's resource bundle is in the package"; fi
grep -Eq '^-rwxr-xr-x root/root .* \./usr/bin/ferry$' <<<"$contents" || fail "/usr/bin/ferry is not root-owned 755"
depends=$(dpkg-deb --field "$deb" Depends)
for lib in libc6 libcurl4 libmicrohttpd12 libsqlite3-0 libjpeg62-turbo libssl3 libheif1 libgphoto2-6 libqrencode4 libxml2 libsmbclient; do
  grep -Eq "(^|, )$lib( |,|$)" <<<"$depends" || fail "Depends lacks $lib: $depends"
done
echo "package-test: Depends: $depends"

# lintian: errors fail; warnings and info are shown.
lintian --fail-on error --info "$deb" || fail "lintian reports errors"
echo "package-test: lintian: no errors"

# A fresh root with an empty dpkg database: only this package is installed in it
# (--force-depends: its libraries come from this machine, where the binary runs).
root=$(mktemp -d /tmp/ferry-root.XXXXXX)
serve_pid=
cleanup() {
  [[ -n $serve_pid ]] && kill "$serve_pid" 2>/dev/null
  rm -rf "$root"
}
trap cleanup EXIT
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
dpkg --root="$root" --force-depends --force-script-chrootless -i "$deb" >/dev/null 2>&1 ||
  dpkg --root="$root" --force-depends --force-script-chrootless -i "$deb"
ferry=$root/usr/bin/ferry
"$ferry" --help | grep -q "^usage: ferry COMMAND" || fail "installed ferry --help"
"$ferry" --version | grep -q "^libmicrohttpd " || fail "installed ferry --version"
echo "package-test: $("$ferry" --version | tr '\n' ';')"

# The installed page is the one served: marked, served, found.
echo "<!-- installed copy -->" >>"$root/usr/share/ferry/Web/index.html"
photos=$root/tmp-photos
mkdir -p "$photos"
"$ferry" serve "$photos" --port 0 >"$root/serve.log" 2>&1 &
serve_pid=$!
url=
for _ in $(seq 100); do
  url=$(sed -n 's/^ferry serve: open \(http[^ ]*\).*/\1/p' "$root/serve.log")
  [[ -n $url ]] && break
  sleep 0.1
done
[[ -n $url ]] || fail "installed ferry serve printed no address: $(cat "$root/serve.log")"
curl -fsS "$url" | grep -q "<!-- installed copy -->" || fail "ferry serve did not serve $root/usr/share/ferry/Web"
curl -fsS "${url%%\?*}app.js" | cmp -s - "$root/usr/share/ferry/Web/app.js" || fail "app.js differs"
kill "$serve_pid"
wait "$serve_pid" || true
serve_pid=
rm -rf "$photos" "$root/serve.log"
echo "package-test: ferry serve serves /usr/share/ferry/Web"

# The man page renders without warnings.
man_out=$(MANWIDTH=80 man --warnings -l "$root/usr/share/man/man1/ferry.1.gz" 2>&1 >/dev/null)
[[ -z $man_out ]] || fail "man warns: $man_out"
MANWIDTH=80 man -l "$root/usr/share/man/man1/ferry.1.gz" | grep -q "^EXIT STATUS" || fail "man -l shows no EXIT STATUS"
echo "package-test: man -l renders"

# Completion, driven as on a Tab press.
complete_words() {
  bash --norc --noprofile -i -c "source '$root/usr/share/bash-completion/completions/ferry'
    COMP_WORDS=($*); COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1)); _ferry; echo \"\${COMPREPLY[*]}\"" 2>/dev/null
}
[[ $(complete_words ferry g) == get ]] || fail "ferry g<TAB> gives '$(complete_words ferry g)'"
[[ $(complete_words ferry get --ov) == --overwrite ]] || fail "ferry get --ov<TAB>"
[[ $(complete_words ferry sync --layout "''") == "tree date" ]] || fail "ferry sync --layout <TAB>"
zsh -n "$root/usr/share/zsh/vendor-completions/_ferry" || fail "zsh cannot parse _ferry"
echo "package-test: completion: ferry g -> get, ferry get --ov -> --overwrite, --layout -> tree date"

# systemd reads the unit without complaint. Not installed on this machine, the
# program and the man page it names are missing here: those two lines are expected.
if command -v systemd-analyze >/dev/null; then
  mkdir -p "$root/run"
  unit_out=$(XDG_RUNTIME_DIR=$root/run systemd-analyze --user verify \
    "$root/usr/lib/systemd/user/ferry-sync@.service" 2>&1 |
    grep -v -e "Command /usr/bin/ferry is not executable" -e "Command 'man ferry(1)' failed" || true)
  rm -rf "$root/run"
  [[ -z $unit_out ]] || fail "systemd-analyze verify: $unit_out"
  echo "package-test: systemd-analyze verify: ok"
fi

# Removing (and purging) leaves nothing but the dpkg database.
dpkg --root="$root" --force-script-chrootless -P ferry >/dev/null
left=$(find "$root" -mindepth 1 -path "$root/var" -prune -o -print)
[[ -z $left ]] || fail "left behind after removal: $left"
leftvar=$(find "$root/var" -mindepth 1 -path "$root/var/lib/dpkg" -prune -o -print | grep -v -x -e "$root/var/lib" || true)
[[ -z $leftvar ]] || fail "left behind after removal: $leftvar"
echo "package-test: ok ($deb)"
