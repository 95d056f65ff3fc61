#!/usr/bin/env bash
# prepare_gpu_deps.sh: run on the dev machine: copies what the GPU image lacks (GoogleTest sources, rapidcheck, nlohmann,
# CLI11, MPFR, GMP and OpenSSL headers) into the ignored .deps/ folder, to be carried to the GPU machine with the tree.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
deps="$root/.deps"
# One include folder per package: a folder of several would put its other headers ahead of the system's for every
# target that needs one of them (CLI11 2.3 from here beside the image's own CLI11 made fuseproof-audit crash at start).
rm -rf "$deps/include"
mkdir -p "$deps/rapidcheck/include" "$deps/rapidcheck/lib" "$deps/nlohmann/include" "$deps/cli11/include" \
  "$deps/mpfr/include" "$deps/openssl/include"

copy() {  # copy SRC DEST: fails loudly when a source is missing
  [ -e "$1" ] || { echo "prepare_gpu_deps: missing $1 (apt-get install the -dev package)" >&2; exit 1; }
  cp -a "$1" "$2"
}

rm -rf "$deps/googletest"
copy /usr/src/googletest "$deps/googletest"
copy /usr/include/rapidcheck.h "$deps/rapidcheck/include/"
rm -rf "$deps/rapidcheck/include/rapidcheck"
copy /usr/include/rapidcheck "$deps/rapidcheck/include/rapidcheck"
copy /usr/lib/x86_64-linux-gnu/librapidcheck.a "$deps/rapidcheck/lib/"
copy /usr/include/nlohmann "$deps/nlohmann/include/nlohmann"
copy /usr/include/CLI "$deps/cli11/include/CLI"
# MPFR and GMP headers: the GPU image has GCC's libmpfr.so.6 and libgmp.so.10 but not their headers.
copy /usr/include/mpfr.h "$deps/mpfr/include/"
copy /usr/include/x86_64-linux-gnu/gmp.h "$deps/mpfr/include/"
# OpenSSL 3 headers: the generic ones plus the multiarch configuration.h / opensslconf.h, merged into one folder.
rm -rf "$deps/openssl/include/openssl"
copy /usr/include/openssl "$deps/openssl/include/openssl"
cp -a /usr/include/x86_64-linux-gnu/openssl/. "$deps/openssl/include/openssl/"

{
  echo "# .deps/ prepared $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release; echo "$PRETTY_NAME")"
  dpkg-query -W -f '${Package} ${Version}\n' googletest librapidcheck-dev nlohmann-json3-dev libcli11-dev libssl-dev libmpfr-dev libgmp-dev 2>/dev/null
} > "$deps/MANIFEST"
du -sh "$deps"
cat "$deps/MANIFEST"
