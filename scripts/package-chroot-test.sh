#!/usr/bin/env bash
# The package on a fresh Debian: debootstrap a minimal system of this machine's
# release into a temporary folder, `apt-get install ./ferry_*.deb` in it (which
# must pull libcurl4, libmicrohttpd12, ... from the mirror this machine's apt
# uses), run `ferry --version` and `ferry demo` there and fetch the demo's page
# and a folder listing, then `apt-get remove ferry` and check that no file of
# the package is left. Needs root and the Debian mirror; about 3 minutes.
# Not part of scripts/test.sh (network); run it after scripts/package.sh.
#
#   scripts/package-chroot-test.sh [DEB]
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "package-chroot-test: FAILED: $*" >&2
  exit 1
}
deb=${1:-$(ls -t .build/deb/ferry_*.deb | head -1)}
[[ -f $deb ]] || fail "no package; run scripts/package.sh"
command -v debootstrap >/dev/null ||
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends debootstrap >/dev/null
# The mirror and release this machine's apt uses.
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
[[ -n $mirror ]] || mirror=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list)
. /etc/os-release
suite=$VERSION_CODENAME

root=$(mktemp -d /tmp/ferry-chroot.XXXXXX)
chmod 755 "$root"  # apt's _apt user downloads into it
demo_pid=
cleanup() {
  [[ -n $demo_pid ]] && kill "$demo_pid" 2>/dev/null
  mountpoint -q "$root/proc" && umount "$root/proc"
  rm -rf "$root"
}
trap cleanup EXIT
echo "package-chroot-test: debootstrap $suite into $root"
debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$root.log" 2>&1 || fail "debootstrap: $(tail -3 "$root.log")"
rm -f "$root.log"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
cp "$deb" "$root/tmp/"
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }

in_root apt-get update -qq
in_root apt-get install -y -qq "/tmp/$(basename "$deb")" >/dev/null || fail "apt-get install"
for lib in libcurl4 libmicrohttpd12 libsqlite3-0 libjpeg62-turbo libssl3 libheif1 libgphoto2-6 libqrencode4; do
  in_root dpkg -s "$lib" >/dev/null 2>&1 || fail "apt-get did not install $lib"
done
in_root ferry --version
in_root dpkg -L ferry >"$root/tmp/files"

# chroot and env exec: $! is ferry itself, which Ctrl-C (SIGINT) stops.
chroot "$root" env LC_ALL=C.UTF-8 ferry demo --port 0 >"$root/tmp/demo.log" 2>&1 &
demo_pid=$!
url=
for _ in $(seq 150); do
  url=$(sed -n 's/^ferry demo: open \(http[^ ]*\).*/\1/p' "$root/tmp/demo.log")
  [[ -n $url ]] && break
  sleep 0.1
done
[[ -n $url ]] || fail "ferry demo printed no address: $(cat "$root/tmp/demo.log")"
curl -fsS "$url" | grep -q "<html" || fail "the demo's page"
curl -fsS "${url%%\?*}api/list?path=/DCIM" | grep -q '"100FERRY"' || fail "the demo's card listing"
kill -INT "$demo_pid"
wait "$demo_pid" || true
demo_pid=
echo "package-chroot-test: ferry demo serves its page and card"

in_root apt-get remove -y -qq ferry >/dev/null
in_root dpkg -s ferry >/dev/null 2>&1 && fail "ferry is still known to dpkg after apt-get remove"
while read -r f; do
  [[ $f == /. ]] && continue
  if [[ -e $root$f && ! -d $root$f ]] || [[ -d $root$f && $f == *ferry* ]]; then fail "left behind: $f"; fi
done <"$root/tmp/files"
echo "package-chroot-test: ok (apt-get install pulled the libraries; apt-get remove left nothing)"
