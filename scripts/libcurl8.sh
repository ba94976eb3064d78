#!/usr/bin/env bash
# Prints a directory holding libcurl 8 (libcurl.so.4), for running the tests a second time against
# it with LD_LIBRARY_PATH (scripts/test.sh does). Debian 12 ships libcurl 7.88.1; its
# bookworm-backports suite has 8.14.1. The package is fetched once with apt-get download into
# .build/libcurl8 (apt's own lists and cache there too: the system's apt sources are not touched,
# and no root is needed) and unpacked with dpkg -x. Prints nothing when the system libcurl is
# already 8 or newer (Ubuntu 24.04, Debian 13): the first run covered it.
#   COURIER_DEBIAN_MIRROR=http://deb.debian.org/debian   # the mirror; by default the system's own
set -euo pipefail
cd "$(dirname "$0")/.."

system_version="$(pkg-config --modversion libcurl 2>/dev/null || echo 0)"
if [ "${system_version%%.*}" -ge 8 ]; then
  echo "libcurl8.sh: the system libcurl is already ${system_version}" >&2
  exit 0
fi

dir="$PWD/.build/libcurl8"
lib="$dir/root/usr/lib/$(uname -m)-linux-gnu"
if [ ! -e "$lib/libcurl.so.4" ]; then
  mirror="${COURIER_DEBIAN_MIRROR:-}"
  if [ -z "$mirror" ] && [ -f /etc/apt/sources.list.d/debian.sources ]; then
    mirror="$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)"
  fi
  if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
    mirror="$(awk '$1 == "deb" && $3 ~ /^bookworm$/ { print $2; exit }' /etc/apt/sources.list)"
  fi
  mirror="${mirror:-http://deb.debian.org/debian}"
  rm -rf "$dir"
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/download"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm-backports main" >"$dir/sources.list"
  apt_options=(
    -o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$dir/lists"
    -o "Dir::Cache=$dir/cache" -o Debug::NoLocking=1 -o APT::Sandbox::User="$(id -un)"
  )
  echo "libcurl8.sh: fetching libcurl4 from $mirror bookworm-backports" >&2
  apt-get -q "${apt_options[@]}" update >&2
  (cd "$dir/download" && apt-get -q "${apt_options[@]}" download libcurl4/bookworm-backports >&2)
  dpkg -x "$dir"/download/libcurl4_*.deb "$dir/root"
  if [ ! -e "$lib/libcurl.so.4" ]; then
    echo "libcurl8.sh: the package held no $lib/libcurl.so.4" >&2
    exit 1
  fi
fi
echo "$lib"
