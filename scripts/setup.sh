#!/usr/bin/env bash
# Installs what Ferry needs to build, test and benchmark on a fresh Debian machine
# with the Swift toolchain. Safe to run again: it only installs what is missing.
#
#   scripts/setup.sh            build + test dependencies
#   scripts/setup.sh --bench    also the peers the benchmarks compare against
set -euo pipefail
cd "$(dirname "$0")/.."

# C libraries Ferry links (see Package.swift), and the real servers the tests start.
packages=(
  pkg-config
  libcurl4-openssl-dev   # every transfer
  libmicrohttpd-dev      # every HTTP server (ferry card, ferry serve)
  libsqlite3-dev         # sync history
  libjpeg62-turbo-dev    # thumbnails
  libssl-dev             # SHA-256 (libcrypto): checksums of imported files, SSH host key fingerprints
  libheif-dev            # HEIC/HEIF thumbnails, previews and Exif (ferry serve)
  libsmbclient-dev       # SMB shares (smb://): Samba's client library
  samba smbclient        # SMB test server (smbd, samba-dcerpcd for share lists) and the benchmark's peer
  libqrencode-dev        # the QR code ferry serve prints for a phone
  libxml2-dev            # WebDAV multistatus replies (dav://, davs://)
  zbar-tools             # zbarimg: the tests read that QR code back
  libgphoto2-dev         # cameras (camera://); its Directory Browse driver in libgphoto2-6 for the tests
  libheif-examples       # heif-enc: the tests' HEIC samples
  libimage-exiftool-perl # exiftool: the tests' photos in all eight orientations, with capture dates
  nginx-light            # HTTP test server (Range, limit_rate, max_ranges 0, autoindex)
  apache2                # HTTP folder pages: mod_autoindex (HTTPFolderTests); WebDAV: mod_dav_fs
  libnginx-mod-http-dav-ext  # WebDAV test server: nginx's PROPFIND (WebDAVTests)
  rclone                 # WebDAV test server (rclone serve webdav) and the WebDAV benchmark's peer
  php-cli php-sabre-dav  # WebDAV test server: sabre/dav, the library under Nextcloud and ownCloud
  lighttpd               # HTTP folder pages: mod_dirlisting (HTTPFolderTests)
  vsftpd                 # FTP test server (and the benchmarks' FTP peer); proftpd: below
  openssl                # self-signed certificates for FTPS tests
  openssh-server openssh-client  # SFTP tests and benchmark: sshd, ssh-keygen, ssh-agent, sftp
  curl
  chromium chromium-driver  # browser tests of ferry serve (selenium drives headless Chromium)
  ffmpeg                 # the browser test's small MP4 (H.264) for the viewer's <video>
  dpkg-dev lintian       # scripts/package.sh (dpkg-shlibdeps) and scripts/package-test.sh
  man-db zsh             # the man page and zsh completion tests
)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(wget aria2 lftp hyperfine time imagemagick wrk tcpdump gphoto2)  # tcpdump: flashair_bench.py --only gap; gphoto2: camera_bench.py
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian starts packaged servers on install where it can; tests start their own,
  # so stop the system-wide instances (by their init scripts, never other copies).
  for svc in nginx apache2 lighttpd vsftpd proftpd ssh; do $SUDO service "$svc" stop >/dev/null 2>&1 || true; done
fi

# proftpd-basic and vsftpd conflict as Debian packages (both Provide ftp-server:
# apt refuses the pair, or removes one to install the other). The tests only need
# the programs, so proftpd (and a spare vsftpd) are unpacked into .build/ftp-servers.
scripts/ftp-test-servers.sh >/dev/null

# Python test tools (pyftpdlib, tfatool, flashair-sync, selenium, asyncssh, axe-core for selenium) live in a venv inside the build folder.
venv=.build/test-venv
if [[ ! -x $venv/bin/python ]]; then
  python3 -m venv "$venv"
fi
want=(pyftpdlib pyopenssl tfatool flashair-sync selenium asyncssh selenium-axe-python==2.2.0)
if ! "$venv/bin/python" -c "import pyftpdlib, OpenSSL, tfatool, _flashair_sync, selenium, asyncssh, selenium_axe_python" 2>/dev/null; then
  "$venv/bin/pip" install -q "${want[@]}"
fi
echo "setup: ok"
