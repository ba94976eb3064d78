#!/usr/bin/env bash
# Installs the Debian packages Courier needs when they are missing. Safe to run again.
#   libcurl4-openssl-dev, libnghttp2-dev: FoundationNetworking (URLSession) and the curl transport;
#   pkg-config: how SwiftPM finds libcurl for the CCurl system module;
#   libxml2: FoundationXML (CourierXML) parses with it;
#   zlib1g-dev: the core decodes gzip and deflate bodies with the system zlib (CZlib);
#   libpsl-dev, publicsuffix: the cookie jar's public suffixes (CPSL), libpsl with the system's list;
#   curl: the example service's smoke test (Examples/ServiceExample/smoke-test.sh) calls it with it.
#   python3: Examples/FirstService/check.sh reads Package.resolved and serves its loopback files with it.
# With --bench it also installs wrk and nghttp2-client (h2load): courier-bench's physical limit.
set -euo pipefail

packages=(libcurl4-openssl-dev libnghttp2-dev pkg-config libxml2 zlib1g-dev libpsl-dev publicsuffix curl python3)
if [ "${1:-}" = "--bench" ]; then
  packages+=(wrk nghttp2-client)
fi
missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

echo "Installing missing packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1; then
  sudo="sudo"
else
  echo "error: need root (or sudo) to install: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
