#!/usr/bin/env bash
# Builds rdshare (librdkafka share consumers for mkbench's share scenario)
# against the librdkafka 2.15.1 that compat_test/librdkafka_suite.sh builds
# in its cache (run that once first), and prints the binary's path. The
# binary finds that library through its rpath.
#
#   go run ./internal/bench/cmd/mkbench -scenario share -librdkafka-share "$(bash internal/bench/cmd/rdshare/build.sh)"
set -euo pipefail
cd "$(dirname "$0")"
cache=${LIBRDKAFKA_SUITE_CACHE:-$HOME/.cache/minikafka/librdkafka}
lib=$cache/src/src
if [ ! -f "$lib/librdkafka.so.1" ]; then
  echo "no librdkafka build in $cache: run bash compat_test/librdkafka_suite.sh once" >&2
  exit 1
fi
out=${RDSHARE_OUT:-/tmp/rdshare}
gcc -O2 -Wall -o "$out" rdshare.c -I"$lib" -L"$lib" -l:librdkafka.so.1 -Wl,-rpath,"$lib" -lpthread
echo "$out"
