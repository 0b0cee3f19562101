#!/usr/bin/env bash
# Makes the FTP test servers available to the tests: vsftpd, proftpd and
# pure-ftpd unpacked into .build/ftp-servers/root, and pyftpdlib (+ pyOpenSSL for TLS) in the venv
# .build/test-venv.
#
# Why unpack instead of `apt-get install vsftpd proftpd-basic pure-ftpd`: Debian's
# vsftpd, proftpd-core and pure-ftpd all Provide and Conflict with `ftp-server`, so apt refuses the
# pair in one call and removes one when the other is installed later. The tests
# start the servers themselves with their own config, so the binaries are all
# they need: `apt-get download` + `dpkg-deb -x`, plus the runtime libraries,
# which do not conflict and are installed normally.
#
# Safe to run again: it only fetches what is missing. Needs root (apt-get) the
# first time.
set -euo pipefail
cd "$(dirname "$0")/.."

root=.build/ftp-servers/root
libs=(
  openssl
  # vsftpd
  libcap2 libpam0g libssl3 libwrap0
  # proftpd-core and proftpd-mod-crypto (mod_tls); pure-ftpd needs nothing more
  libacl1 libcrypt1 libhiredis0.14 libidn2-0 libmemcached11 libmemcachedutil2
  libncursesw6 libpcre2-8-0 libpcre2-posix3 libtinfo6 zlib1g libsodium23
)
debs=(vsftpd proftpd-core proftpd-mod-crypto pure-ftpd)

SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"

missing=()
for p in "${libs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "ftp-test-servers: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
fi

if [[ ! -x $root/usr/sbin/vsftpd || ! -x $root/usr/sbin/proftpd || ! -f $root/usr/lib/proftpd/mod_tls.so
  || ! -x $root/usr/sbin/pure-ftpd ]]; then
  echo "ftp-test-servers: unpacking ${debs[*]} into $root"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$root"
  # apt-get download writes into the current folder and runs as the _apt user
  # where it can; a world-writable temp folder keeps that working as root.
  chmod 777 "$work"
  (cd "$work" && apt-get download -qq "${debs[@]}" >/dev/null) \
    || { $SUDO apt-get update -qq && (cd "$work" && apt-get download -qq "${debs[@]}" >/dev/null); }
  for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$root"; done
fi

venv=.build/test-venv
if [[ ! -x $venv/bin/python ]]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import pyftpdlib, OpenSSL" 2>/dev/null; then
  "$venv/bin/pip" install -q pyftpdlib pyopenssl
fi
"$root/usr/sbin/vsftpd" -v 0>&1 | head -1
"$root/usr/sbin/proftpd" -v
echo "ftp-test-servers: ok"
