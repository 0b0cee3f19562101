#!/usr/bin/env bash
# Ferry's main job on a fresh machine: builds Ferry, starts a local web server
# that sends a 300 MB file slowly, and downloads it with a visible progress bar.
# Press Ctrl-C during the download and run this again: it resumes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
swift build -c release --static-swift-stdlib --product ferry 2>&1 | tail -1
ferry=$(swift build -c release --static-swift-stdlib --show-bin-path)/ferry

root=$(mktemp -d /tmp/ferry-demo.XXXXXX)
mkdir -p "$root/www" "$root/tmp"
head -c 300000000 /dev/urandom >"$root/www/sample.bin"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$root/nginx.conf" <<CONF
worker_processes 1; daemon off; master_process off; error_log $root/error.log; pid $root/nginx.pid;
events { worker_connections 64; }
http { access_log off; client_body_temp_path $root/tmp; proxy_temp_path $root/tmp;
  fastcgi_temp_path $root/tmp; uwsgi_temp_path $root/tmp; scgi_temp_path $root/tmp;
  server { listen 127.0.0.1:$port; root $root/www; limit_rate 30m; } }
CONF
nginx -c "$root/nginx.conf" -p "$root" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$root"' EXIT
sleep 0.5
mkdir -p downloads
echo "ferry get http://127.0.0.1:$port/sample.bin -o downloads/"
"$ferry" get "http://127.0.0.1:$port/sample.bin" -o downloads/ --overwrite
ls -l downloads/sample.bin
