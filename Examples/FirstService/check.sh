#!/usr/bin/env bash
# Tries Courier as a new service does, from this nested package: counts the packages its package
# line resolves (at most COURIER_MAX_PACKAGES, 3: the core's three, as the README says; see "What a
# service resolves" in docs/INTERNALS.md), checks by resolution what the optional adapters' traits
# bring (their packages, nothing of the contributors' build), builds it in release, and runs it
# against a loopback file server (Python's http.server): the release binary must find the linked
# transports and choose curl, decode an ISO 8601 date with one configuration line, and fail a 404
# as http_status, and refuse a key of a wing it does not link (COURIER_COOKIES). Prints the first debug build's time when asked (COURIER_TIME_DEBUG_BUILD=1).
set -euo pipefail
cd "$(dirname "$0")"
# As a service sees Courier: not the contributors' build that scripts/test.sh turns on.
unset COURIER_DEVELOPMENT
max="${COURIER_MAX_PACKAGES:-3}"
fail() { echo "first-service check failed: $*" >&2; exit 1; }
# A pin file left from an earlier manifest would keep packages the manifest no longer names.
rm -f Package.resolved
swift package resolve >/dev/null
pins="$(python3 -c 'import json; print(len(json.load(open("Package.resolved"))["pins"]))')"
names="$(python3 -c 'import json; print(" ".join(p["identity"] for p in json.load(open("Package.resolved"))["pins"]))')"
echo "== first service: resolves $pins packages ($names)"
[ "$pins" -le "$max" ] || fail "Courier + CourierCurl resolve $pins packages, more than $max"
# The same with the optional adapters' traits on (resolution only, a few seconds): each brings its
# own packages, and nothing of the contributors' build (SwiftNIO, the benchmark's) comes with them.
traited="$(mktemp -d)"
mkdir -p "$traited/Sources/T"
echo 'import CourierXML' >"$traited/Sources/T/main.swift"
cat >"$traited/Package.swift" <<MANIFEST
// swift-tools-version:6.2
import PackageDescription
let package = Package(
    name: "traited", platforms: [.macOS(.v15)],
    dependencies: [.package(name: "courier", path: "$(cd ../.. && pwd)", traits: ["XML", "OpenAPI", "SwiftConfiguration", "ServiceLifecycle", "Tracing"])],
    targets: [.executableTarget(name: "T", dependencies: [.product(name: "CourierXML", package: "courier")])])
MANIFEST
(cd "$traited" && swift package resolve >/dev/null)
traited_names="$(python3 -c 'import json,sys; print(" ".join(sorted(p["identity"] for p in json.load(open(sys.argv[1]))["pins"])))' "$traited/Package.resolved")"
rm -rf "$traited"
echo "== with the XML, OpenAPI, SwiftConfiguration, ServiceLifecycle and Tracing traits: $traited_names"
for wanted in xmlcoder swift-openapi-runtime swift-configuration swift-service-lifecycle swift-distributed-tracing; do
  grep -qw "$wanted" <<<"$traited_names" || fail "the traits did not bring $wanted"
done
for unwanted in swift-nio async-http-client swift-argument-parser hdrhistogram-swift; do
  ! grep -qw "$unwanted" <<<"$traited_names" || fail "the adapters' traits brought $unwanted"
done
if [ "${COURIER_TIME_DEBUG_BUILD:-0}" = 1 ]; then
  rm -rf .build-debug-timing
  start=$(date +%s)
  swift build --scratch-path .build-debug-timing >/dev/null
  echo "== first service: first debug build took $(( $(date +%s) - start )) s"
  rm -rf .build-debug-timing
fi
swift build -c release
binary="$(swift build -c release --show-bin-path)/FirstService"
site="$(mktemp -d)"
server_log="$(mktemp)"
server=""
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill "$server" 2>/dev/null || true; fi
  rm -rf "$site" "$server_log"
}
trap cleanup EXIT
printf '{"id": 7, "placedAt": "2025-12-06T05:46:40.250Z"}' >"$site/order.json"
python3 -u -m http.server --bind 127.0.0.1 --directory "$site" 0 >"$server_log" 2>&1 &
server=$!
port=""
for _ in $(seq 1 100); do
  port="$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$server_log" | head -1)"
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || fail "the file server did not start: $(cat "$server_log")"
errors="$(mktemp)"
output="$(timeout 60 "$binary" "http://127.0.0.1:$port" 2>"$errors")" || fail "the release binary failed: $output $(cat "$errors")"
rm -f "$errors"
echo "$output"
grep -qx "linked: curl,urlsession" <<<"$output" || fail "linked transports"
grep -qx "transport: curl" <<<"$output" || fail "the default transport"
grep -qx "cookies without CourierCookies: refused" <<<"$output" || fail "a key of a wing not linked"
grep -qx "breaker without CourierResilience: refused" <<<"$output" || fail "a setting of a wing not linked"
grep -qx "order: 7 1765000000" <<<"$output" || fail "the ISO 8601 answer"
grep -qx "missing: http_status 404" <<<"$output" || fail "the 404"
