#!/usr/bin/env bash
# Builds the DocC catalogs (Courier, CourierXML, and the adapters') with swift-docc-plugin and fails on any warning
# (an unresolved symbol link, for example). The plugin is added to the package only here
# (COURIER_DOCS=1), so the normal build never compiles it. It reads the symbols of the debug build
# in .build, the one `scripts/test.sh` has just made with the same traits (about 2 minutes then
# for all fifteen catalogs; a scratch directory of its own rebuilt everything, past CI's budget).
# Output: .build-docs/<target>.doccarchive.
set -euo pipefail
cd "$(dirname "$0")/.."
# The contributors' build: the test server, benchmark, examples and every trait (Package.swift).
export COURIER_DEVELOPMENT=1
export COURIER_DOCS=1
# The archives are moved here; a fresh clone has no such folder yet.
mkdir -p .build-docs
# The contributors' build turns every trait on (Package.swift), so that each optional adapter has its
# symbols and the scratch directory is built one way only.
for target in Courier CourierAlerts CourierTracing CourierCookies CourierStreaming CourierCache CourierResilience CourierXML CourierCurl CourierURLSession CourierAsyncHTTPClient CourierMock CourierConfiguration \
  CourierServiceLifecycle CourierOpenAPI; do
  echo "== documentation for $target"
  swift package --disable-sandbox --allow-writing-to-directory .build-docs \
    generate-documentation --target "$target" --warnings-as-errors \
    --output-path ".build-docs/$target.doccarchive"
done
