#!/usr/bin/env bash
# Builds the example service and tries it over each transport: starts it on a free port against
# the loopback test server it runs in process, calls its routes, reads /metrics, stops it with
# SIGTERM and checks that it stopped cleanly. Every wait is bounded. Exits non-zero on the first
# thing that is not as expected, printing the service's log.
set -euo pipefail
cd "$(dirname "$0")"
# CourierTestServer (the downstream stand-ins) is in Courier's contributors' build.
export COURIER_DEVELOPMENT=1
../../scripts/install-deps.sh
swift build --product courier-service-example
binary="$(swift build --show-bin-path)/courier-service-example"
log="$(mktemp)"
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -f "$log"
}
trap cleanup EXIT
fail() {
  echo "smoke test failed: $*" >&2
  echo "--- the service's log:" >&2
  cat "$log" >&2
  exit 1
}
# GET a path; prints the body; fails on a status other than the one expected (200 by default).
get() {
  local path="$1" expected="${2:-200}" body status
  body="$(mktemp)"
  status="$(curl -sS --max-time 30 -o "$body" -w '%{http_code}' "http://127.0.0.1:$port$path")" || fail "GET $path did not complete"
  [ "$status" = "$expected" ] || fail "GET $path answered $status, expected $expected: $(cat "$body")"
  cat "$body"
  rm -f "$body"
}
expect() {
  local what="$1" text="$2" pattern="$3"
  grep -qF -- "$pattern" <<<"$text" || fail "$what: expected '$pattern' in: $text"
}
# Waits up to 30 s for the service to exit and sets `status` to its exit status; fails with $1
# when it is still running then.
wait_for_exit() {
  for _ in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && fail "$1"
  status=0
  wait "$pid" || status=$?
  pid=""
}

# Courier's keys through swift-configuration's environment names (`courier.failureLogLevel` is
# COURIER_FAILURE_LOG_LEVEL); the service logs the values in effect at start. URLSession takes no
# HTTP version but `2`, so it gets that one (and refuses `1.1`, checked after the loop).
for transport in curl urlsession; do
  echo "== the example service over $transport"
  version=1.1
  if [ "$transport" = urlsession ]; then version=2; fi
  HTTP_PORT=0 COURIER_TRANSPORT="$transport" LOG_LEVEL=info COURIER_TIMEOUTS_REQUEST=7 \
    COURIER_FAILURE_LOG_LEVEL=warning COURIER_HTTP_VERSION="$version" "$binary" 2>"$log" &
  pid=$!
  port=""
  for _ in $(seq 1 300); do
    port="$(sed -n 's/.*port=\([0-9][0-9]*\).*listening.*/\1/p' "$log" | head -1)"
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || fail "the service exited before it listened"
    sleep 0.1
  done
  [ -n "$port" ] || fail "the service did not listen within 30 s"
  expect "the log" "$(cat "$log")" "transport=$transport"
  expect "the log" "$(cat "$log")" "courier.timeouts.request=7.0 "
  expect "the log" "$(cat "$log")" "courier.failureLogLevel=warning "
  expect "the log" "$(cat "$log")" "courier.httpVersion=$version "

  expect "/health" "$(get /health)" "ok"
  user="$(get /users/42)"
  expect "/users/42" "$user" '"downstreamPath":"\/echo\/users\/42"'
  expect "/users/42" "$user" '"downstreamQuery":"expand=teams"'
  inventory="$(get '/inventory?ids=1,2,3,4,5,6,7,8,9,10')"
  expect "/inventory" "$inventory" '"succeeded":10'
  expect "/inventory" "$inventory" '"requested":10'
  get '/inventory?ids=1,x' 400 >/dev/null
  get '/users/not-a-number' 400 >/dev/null
  metrics="$(get /metrics)"
  expect "/metrics" "$metrics" "courier_call_duration"
  expect "/metrics" "$metrics" "transport=\"$transport\""

  kill -TERM "$pid"
  wait_for_exit "the service did not stop within 30 s of SIGTERM"
  [ "$status" -eq 0 ] || fail "the service exited with $status after SIGTERM"
  expect "the log" "$(cat "$log")" "stopped"
  echo "   COURIER_* settings, health, users, inventory (a batch of 10), bad input (400), metrics and a clean stop: ok"
done

echo "== COURIER_HTTP_VERSION=1.1 over urlsession: refused at start"
HTTP_PORT=0 COURIER_TRANSPORT=urlsession COURIER_HTTP_VERSION=1.1 "$binary" 2>"$log" &
pid=$!
wait_for_exit "the service did not stop within 30 s of a refused setting"
[ "$status" -eq 2 ] || fail "the service exited with $status for a refused setting, expected 2"
expect "the log" "$(cat "$log")" "httpVersion is '1.1'"
echo "== the example service: ok"
