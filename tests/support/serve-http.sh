#!/usr/bin/env bash
# Serves a folder over HTTP with Debian's nginx inside a private network namespace (loopback
# only, nothing outside can reach it), optionally shaped by tc, then runs a command in that
# namespace and stops the server. Used by the remote-storage tests (tests/cli/remote_cli_test.cpp).
#
#   serve-http.sh DIR ROOT RATE -- COMMAND...
#     DIR   a scratch folder for nginx's configuration, logs and temporary files
#     ROOT  the folder served at http://127.0.0.1:8080/ (JSON directory listings, byte ranges)
#     RATE  a tc rate ("40mbit") the loopback is shaped to (token bucket), or "none"
#   DIR/extra.conf, when present, is included in the server block (fault locations).
#   DIR/access.log: one line per request: status, body bytes sent, Range header, URI.
# Exits 77 when the namespace or the shaping cannot be set up; else the command's status.
# Re-executes itself under `unshare -n` (root, or a user allowed to make namespaces).
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"  # nginx, tc: where Debian puts them, off a user's PATH
if [[ "${MMPROF_IN_NETNS:-}" != 1 ]]; then
  command -v nginx >/dev/null || { echo "serve-http.sh: no nginx (scripts/install-deps)"; exit 77; }
  unshare -n true 2>/dev/null || { echo "serve-http.sh: cannot make a network namespace"; exit 77; }
  MMPROF_IN_NETNS=1 exec unshare -n "$0" "$@"
fi
dir=$1 root=$2 rate=$3
shift 4
# A real link's packet size (loopback's 64 KiB would not fit the token bucket's burst)
ip link set lo mtu 1500 up || exit 77
if [[ "$rate" != none ]]; then
  tc qdisc add dev lo root tbf rate "$rate" burst 32kb latency 400ms || exit 77
fi
mkdir -p "$dir/tmp"
touch "$dir/extra.conf"
cat >"$dir/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 256; }
http {
  log_format mmprof '\$status \$body_bytes_sent "\$http_range" \$uri';
  access_log $dir/access.log mmprof;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:8080;
    root $root;
    autoindex on;
    autoindex_format json;
    include $dir/extra.conf;
  }
}
CONF
nginx -c "$dir/nginx.conf" -p "$dir" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 200); do
  (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null && break
  sleep 0.05
done
export MMPROF_HTTP_PID=$server  # a test may stop the server mid-run
"$@"
