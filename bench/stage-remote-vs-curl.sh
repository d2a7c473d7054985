#!/usr/bin/env bash
# `mmprof stage URL` against curl's own parallel download of the same files (one curl process,
# --parallel-max 4, kept-alive connections, then sync -f for the same durability), from Debian's
# nginx serving DATA inside a private network namespace (tests/support/serve-http.sh), the
# loopback optionally shaped (protocol: bench/README.md, "stage-remote-vs-curl"). Env: BUILD
# (default build/release), DATA (a files dataset; default ~/.cache/mmprof/default-v1/files),
# REPS (default 5), RATE (a tc rate such as 200mbit, or none: the default).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${MMPROF_IN_BENCH:-}" != 1 ]]; then
  data="${DATA:-$HOME/.cache/mmprof/default-v1/files}"
  work=$(mktemp -d /var/tmp/mmprof-remote-bench.XXXXXX)
  trap 'rm -rf "$work"' EXIT
  # Served from a folder holding the dataset as files/ (nginx's workers run as nobody).
  chmod 755 "$work"
  mkdir -p "$work/root" "$work/server"
  ln -s "$(realpath "$data")" "$work/root/files"
  MMPROF_IN_BENCH=1 WORK="$work" tests/support/serve-http.sh "$work/server" "$work/root" \
    "${RATE:-none}" -- "$0"
  exit
fi
bin="$PWD/${BUILD:-build/release}/src/mmprof"
reps="${REPS:-5}"
url=http://127.0.0.1:8080/files/
# curl's list: every file of the listing (what mmprof stage copies), one url/output pair each;
# made inside curl's arm, as stage lists the server inside its own.
list() {
  curl -s "$url" | /usr/bin/python3 -c '
import json, sys
for e in json.load(sys.stdin):
    if e["type"] == "file":
        print("url = \"%s%s\"\noutput = \"%s\"" % (sys.argv[1], e["name"], e["name"]))' "$url"
}
now() { date +%s.%N; }
stage() { "$bin" stage --quiet --threads 4 "$url" "$WORK/a"; }
fetch() {
  list >"$WORK/curl.cfg"
  mkdir -p "$WORK/b"
  (cd "$WORK/b" && curl -s --no-progress-meter --fail -Z --parallel-max 4 -K "$WORK/curl.cfg")
  sync -f "$WORK/b"
}
stage; rm -rf "$WORK/a"  # warm-up: the server's page cache holds the files from here on
for i in $(seq "$reps"); do
  rm -rf "$WORK/a" "$WORK/b"
  # Interleaved, the order alternating, so a drift of the machine falls on both arms.
  if ((i % 2)); then
    t0=$(now); stage; t1=$(now); fetch; t2=$(now); s=$(echo "$t1 - $t0" | bc); c=$(echo "$t2 - $t1" | bc)
  else
    t0=$(now); fetch; t1=$(now); stage; t2=$(now); c=$(echo "$t1 - $t0" | bc); s=$(echo "$t2 - $t1" | bc)
  fi
  cmp -s <(cd "$WORK/a" && find . -type f ! -name stage.json -exec md5sum {} + | sort) \
    <(cd "$WORK/b" && find . -type f -exec md5sum {} + | sort) || { echo "copies differ" >&2; exit 1; }
  awk -v s="$s" -v c="$c" -v i="$i" \
    'BEGIN { printf "pair %d: mmprof stage %.3f s, curl -Z + sync %.3f s, curl/stage %.3f\n", i, s, c, c / s }'
done
