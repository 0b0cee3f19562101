#!/usr/bin/env bash
# Ferry's main job on a fresh machine: installs what is needed, builds Ferry, and
# runs `ferry demo`: a FlashAir card emulator serving generated sample photos and
# the browser UI over it. Open the printed URL; Ctrl-C stops both.
# (scripts/download-demo.sh shows a resumable download with a progress bar.)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
swift build -c release --static-swift-stdlib --product ferry 2>&1 | tail -1
exec "$(swift build -c release --static-swift-stdlib --show-bin-path)/ferry" demo "$@"
