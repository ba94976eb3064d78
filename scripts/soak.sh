#!/usr/bin/env bash
# The faulty-network soak (issue 25): `courier-bench soak` over each transport against its
# embedded server, which answers a share of requests with a reset, a stall past the deadline, a
# 503, a truncated body or a slow body. Fails when a call completes twice or never, when a POST
# without an Idempotency-Key reaches the server twice, or when descriptors are not back to where
# they were. The test command runs it with 1,000 calls; the default is the issue's 10,000.
#   scripts/soak.sh [CALLS] [TRANSPORT...]      on the system's libcurl (default: curl ahc urlsession)
#   LIBCURL8=1 scripts/soak.sh [CALLS] curl     on libcurl 8 (scripts/libcurl8.sh)
#   RELEASE=1 scripts/soak.sh                   with the release build
set -euo pipefail
cd "$(dirname "$0")/.."
# The contributors' build: the test server, benchmark, examples and every trait (Package.swift).
export COURIER_DEVELOPMENT=1
calls="${1:-10000}"
case "$calls" in '' | *[!0-9]*) echo "usage: scripts/soak.sh [CALLS] [TRANSPORT...]" >&2; exit 2 ;; esac
shift || true
transports=("$@")
[ "${#transports[@]}" -gt 0 ] || transports=(curl ahc urlsession)
scripts/install-deps.sh
configuration=debug
[ "${RELEASE:-0}" = 1 ] && configuration=release
swift build -c "$configuration" --product courier-bench
bench="$(swift build -c "$configuration" --show-bin-path)/courier-bench"
if [ "${LIBCURL8:-0}" = 1 ]; then
  export LD_LIBRARY_PATH="$(scripts/libcurl8.sh)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
status=0
for transport in "${transports[@]}"; do
  "$bench" soak --transport "$transport" --calls "$calls" --max-seconds 900 || status=1
done
exit "$status"
