#!/usr/bin/env bash
# Long streams (issue 25): BYTES (default 1 GiB) downloaded and uploaded through every transport,
# each transfer in a process of its own (CourierMemoryProbe): every byte must arrive intact and in
# order (the CRC-32 of a known pattern, checked end to end) and the process may grow by less than
# ALLOWANCE_MIB (default 32) while it moves them. URLSession buffers a download ahead of a slow
# reader (declared), so its download growth is printed, not bounded. The test command runs the
# same test with 64 MiB.
#   scripts/longstream.sh [BYTES]
#   LIBCURL8=1 scripts/longstream.sh [BYTES]   on libcurl 8 (scripts/libcurl8.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
# The contributors' build: the test server, benchmark, examples and every trait (Package.swift).
export COURIER_DEVELOPMENT=1
bytes="${1:-1073741824}"
case "$bytes" in '' | *[!0-9]*) echo "usage: scripts/longstream.sh [BYTES]" >&2; exit 2 ;; esac
scripts/install-deps.sh
swift build --build-tests
if [ "${LIBCURL8:-0}" = 1 ]; then
  export COURIER_EXPECT_LIBCURL_MAJOR=8 LD_LIBRARY_PATH="$(scripts/libcurl8.sh)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
COURIER_STREAM_BYTES="$bytes" COURIER_STREAM_ALLOWANCE_MIB="${ALLOWANCE_MIB:-32}" \
  swift test --skip-build --filter LargeBodyTests 2>&1 | grep -E "MiB moved|✘|Test run|recorded an issue"
