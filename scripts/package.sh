#!/usr/bin/env bash
# Builds a release `ferry` (Swift runtime linked statically) and the Debian
# package .build/deb/ferry_VERSION_ARCH.deb:
#
#   /usr/bin/ferry                                  the program (stripped)
#   /usr/share/ferry/Web/                           the browser UI's files (found from /usr/bin/ferry)
#   /usr/share/man/man1/ferry.1.gz                  `ferry __generate man`
#   /usr/share/bash-completion/completions/ferry    `ferry __generate bash`
#   /usr/share/zsh/vendor-completions/_ferry        `ferry __generate zsh`
#   /usr/share/fish/vendor_completions.d/ferry.fish `ferry __generate fish`
#   /usr/lib/systemd/user/ferry-sync@.service       packaging/ferry-sync@.service
#   /usr/share/doc/ferry/{copyright,changelog.Debian.gz,examples/camera.conf}
#   /usr/share/lintian/overrides/ferry              not for the Debian archive: no ITP bug to close
#
# The version is Ferry.version (Sources/FerryKit/Ferry.swift), read from the
# built binary; packaging/changelog's first entry must carry it. Depends comes
# from dpkg-shlibdeps. No maintainer scripts and no conffiles: `apt-get remove`
# leaves nothing behind. scripts/package-test.sh checks the result.
#
#   scripts/package.sh              build and package
#   scripts/package.sh --no-build   package the release build already in .build
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian's default hardening for the link: read-only relocations, bound at load time.
hardening=(-Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now)
if [[ "${1:-}" != "--no-build" ]]; then
  start=$(date +%s)
  swift build -c release --static-swift-stdlib --product ferry "${hardening[@]}"
  echo "package: release build took $(($(date +%s) - start)) s"
fi
bin=$(swift build -c release --static-swift-stdlib "${hardening[@]}" --show-bin-path)
[[ -x $bin/ferry ]] || { echo "package: no $bin/ferry; run without --no-build" >&2; exit 1; }

version=$("$bin/ferry" --version | head -1 | cut -d' ' -f2)
debversion=$(sed -n '1s/^ferry (\([^)]*\)).*/\1/p' packaging/changelog)
if [[ ${debversion%-*} != "$version" ]]; then
  echo "package: packaging/changelog's first entry is $debversion, but ferry is $version;" \
    "add a changelog entry for $version-1" >&2
  exit 1
fi
arch=$(dpkg --print-architecture)
# Reproducible: file times and the man page's date come from the last commit.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

out=.build/deb
root=$out/root
rm -rf "$root"
mkdir -p "$root/DEBIAN"

install -D -m 755 "$bin/ferry" "$root/usr/bin/ferry"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/ferry"
mkdir -p "$root/usr/share/ferry"
cp -R "$bin/Ferry_FerryWeb.resources/Web" "$root/usr/share/ferry/Web"

mkdir -p "$root/usr/share/man/man1" "$root/usr/share/bash-completion/completions" \
  "$root/usr/share/zsh/vendor-completions" "$root/usr/share/fish/vendor_completions.d"
"$bin/ferry" __generate man | gzip -9n > "$root/usr/share/man/man1/ferry.1.gz"
"$bin/ferry" __generate bash > "$root/usr/share/bash-completion/completions/ferry"
"$bin/ferry" __generate zsh > "$root/usr/share/zsh/vendor-completions/_ferry"
"$bin/ferry" __generate fish > "$root/usr/share/fish/vendor_completions.d/ferry.fish"
install -D -m 644 "packaging/ferry-sync@.service" "$root/usr/lib/systemd/user/ferry-sync@.service"

doc=$root/usr/share/doc/ferry
install -D -m 644 packaging/copyright "$doc/copyright"
gzip -9n < packaging/changelog > "$doc/changelog.Debian.gz"
install -D -m 644 packaging/camera.conf "$doc/examples/camera.conf"
install -D -m 644 packaging/lintian-overrides "$root/usr/share/lintian/overrides/ferry"

# Depends: the shared libraries the binary links, as dpkg-shlibdeps names their packages.
shlibs=$(mktemp -d)
trap 'rm -rf "$shlibs"' EXIT
mkdir -p "$shlibs/debian"
printf 'Source: ferry\n\nPackage: ferry\nArchitecture: any\n' > "$shlibs/debian/control"
depends=$(cd "$shlibs" && dpkg-shlibdeps -O "$OLDPWD/$root/usr/bin/ferry" | sed -n 's/^shlibs:Depends=//p')
[[ -n $depends ]] || { echo "package: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
# libsmbclient and libheif are opened on first use (dlopen, Sources/CSMBClient/shim.h,
# Sources/CHeif/shim.h), so dpkg-shlibdeps does not see them: named here, as their shlibs say.
depends="$depends, libsmbclient, libheif1 (>= 1.15.1)"

find "$root" -type d -exec chmod 755 {} +
find "$root" -type f ! -path "$root/usr/bin/*" -exec chmod 644 {} +
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<EOF
Package: ferry
Version: $debversion
Architecture: $arch
Maintainer: $(sed -n '0,/^ -- /s/^ -- \(.*>\)  .*/\1/p' packaging/changelog)
Installed-Size: $size
Depends: $depends
Section: net
Priority: optional
Description: moves files between Wi-Fi SD cards, FTP and HTTP servers and disk
 Ferry lists, downloads, uploads and deletes files on Toshiba FlashAir cards,
 FTP and FTPS servers, HTTP and HTTPS servers and local folders. Downloads show
 progress, resume after an interruption and never leave a short file under a
 final name.
 .
 ferry sync imports new photos from a card or server once each, remembering
 them in a history file; the ferry-sync@ systemd user service runs it in the
 background. ferry serve shows any source in a web browser with thumbnails
 and an image viewer, and ferry card emulates a FlashAir card.
EOF
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/md5sums"
find "$root" -exec touch --no-dereference --date="@$SOURCE_DATE_EPOCH" {} +

deb=$out/ferry_${debversion}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "package: $deb ($(du -h "$deb" | cut -f1)); Depends: $depends"
