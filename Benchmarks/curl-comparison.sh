#!/usr/bin/env bash
# Side-by-side requests/s: the C reference on libcurl multi, CourierCurl through NetworkClient,
# and URLSession through NetworkClient, against one local nginx serving 100 bytes, over HTTP/1.1,
# HTTP/2 over TLS, and cleartext HTTP/2 (h2c, where the linked libcurl supports it).
#
#   Benchmarks/curl-comparison.sh [SECONDS=5] [CONCURRENCY=64]
#
# nginx runs on CPU 0 and each client on CPU 1 (taskset), one at a time. Only 127.0.0.1 is used.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-5}"
concurrency="${2:-64}"

scripts/install-deps.sh
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null
  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null; fi
fi
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"

work="$(mktemp -d)"
nginx_pid=""
cleanup() { if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT

# The test fixtures' server certificate and key (CN=localhost), and their CA.
fixtures=Sources/CourierTestServer/TestCertificates.swift
# (The Swift literal is indented; PEM lines must not be.)
awk '{sub(/^[ \t]+/, "")} /BEGIN CERTIFICATE/{n++} n==1{print} /END CERTIFICATE/ && n==1{exit}' "$fixtures" > "$work/ca.pem"
awk '{sub(/^[ \t]+/, "")} /BEGIN CERTIFICATE/{n++} n==2{print} /END CERTIFICATE/ && n==2{exit}' "$fixtures" > "$work/server.pem"
awk '{sub(/^[ \t]+/, "")} /BEGIN PRIVATE KEY/{p=1} p{print} /END PRIVATE KEY/{exit}' "$fixtures" > "$work/server.key"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
p1=$(free_port); p2=$(free_port); p3=$(free_port)
body=$(printf 'x%.0s' $(seq 1 100))
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $work/nginx.pid;
error_log $work/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 10000000;
  keepalive_timeout 60s;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work; uwsgi_temp_path $work; scgi_temp_path $work;
  server { listen 127.0.0.1:$p1; location / { default_type text/plain; return 200 "$body"; } }
  server { listen 127.0.0.1:$p2 http2; location / { default_type text/plain; return 200 "$body"; } }
  server { listen 127.0.0.1:$p3 ssl http2; ssl_certificate $work/server.pem; ssl_certificate_key $work/server.key;
           location / { default_type text/plain; return 200 "$body"; } }
}
CONF
taskset -c 0 "$nginx_bin" -c "$work/nginx.conf" -p "$work" &
nginx_pid=$!
sleep 1
if ! kill -0 "$nginx_pid" 2>/dev/null; then echo "nginx did not start:" >&2; cat "$work/error.log" >&2; exit 1; fi

cc -O2 -IBenchmarks/CurlReference/include -o "$work/curl_multi_bench" Benchmarks/CurlReference/curl_multi_bench.c Benchmarks/CurlReference/courier_reference.c -lcurl
swift build -c release --product courier-curl-bench >/dev/null
bench="$(swift build -c release --show-bin-path)/courier-curl-bench"

rate() { sed -n 's/.*requests_per_second=\([0-9]*\).*/\1/p'; }
run() { echo "$ $*" >&2; taskset -c 1 "$@"; }

report() {
  local label="$1" c="$2" curl="$3" urlsession="$4"
  awk -v l="$label" -v c="$c" -v k="$curl" -v u="$urlsession" 'BEGIN {
    printf "%-8s C libcurl %7d/s | CurlTransport %7d/s (%.0f%% of C) | URLSession %6s/s (curl = %s x URLSession)\n",
      l, c, k, (c > 0 ? 100 * k / c : 0), u, (u > 0 ? sprintf("%.1f", k / u) : "n/a") }'
}

echo "== HTTP/1.1, $concurrency concurrent GETs of 100 bytes, ${seconds}s each"
c=$(run "$work/curl_multi_bench" "http://127.0.0.1:$p1/" "$concurrency" "$seconds" 1.1 | tee /dev/stderr | rate)
k=$(run "$bench" "http://127.0.0.1:$p1/" --transport curl --http 1.1 --concurrency "$concurrency" --seconds "$seconds" | tee /dev/stderr | rate)
u=$(run "$bench" "http://127.0.0.1:$p1/" --transport urlsession --concurrency "$concurrency" --seconds "$seconds" | tee /dev/stderr | rate)
r1=$(report "HTTP/1.1" "$c" "$k" "$u")

echo "== HTTP/2 over TLS"
c=$(run "$work/curl_multi_bench" "https://localhost:$p3/" "$concurrency" "$seconds" 2 "$work/ca.pem" | tee /dev/stderr | rate)
k=$(run "$bench" "https://localhost:$p3/" --transport curl --http 2 --ca "$work/ca.pem" --concurrency "$concurrency" --seconds "$seconds" | tee /dev/stderr | rate)
r2=$(report "h2/TLS" "$c" "$k" "n/a (no custom CA on Linux)")

echo "== cleartext HTTP/2 (prior knowledge)"
if c=$(run "$work/curl_multi_bench" "http://127.0.0.1:$p2/" "$concurrency" "$seconds" h2c | tee /dev/stderr | rate) && [ -n "$c" ]; then
  k=$(run "$bench" "http://127.0.0.1:$p2/" --transport curl --http h2c --concurrency "$concurrency" --seconds "$seconds" | tee /dev/stderr | rate || true)
  r3=$(report "h2c" "$c" "${k:-0}" "n/a")
else
  r3="h2c      the linked libcurl breaks reused h2c connections (curl issue 10634, fixed in 8.0); CurlTransport refuses h2c there"
fi

echo
echo "$r1"
echo "$r2"
echo "$r3"
