#!/usr/bin/env bash
# Runs Courier's main job: the example service against the embedded loopback server, over every
# transport it links (set COURIER_TRANSPORT=mock, urlsession, curl or ahc to pick one), then the
# Calculator SOAP example the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
# The contributors' build: the test server, benchmark, examples and every trait (Package.swift).
export COURIER_DEVELOPMENT=1
scripts/install-deps.sh
swift run courier-example "$@"
# The Calculator SOAP example (loopback stand-in; --soap-url URL or COURIER_SOAP_URL for another service).
swift run courier-calculator
