#!/usr/bin/env bash
# Runs franz-go's own kgo integration tests (github.com/twmb/franz-go/pkg/kgo
# at the version pinned in go.mod, from the module cache) against a minikafka
# binary started here on a free port with a temp data dir.
#
#   bash compat_test/kgo_suite.sh          # the allowlisted tests; must pass
#   bash compat_test/kgo_suite.sh -all     # every test, to find new passes
#
# KGO_SUITE_RUN=regex runs just those tests (debugging).
# KGO_SUITE_SKIP=regex passes -skip to go test (with -all, for a test that
# hangs rather than fails, as TestTxnEtl did before transactions existed:
# it stalls the whole package until the timeout).
#
# kgo_suite.allow lists the tests expected to pass (one name a line, # for
# comments); it may only grow. FINDINGS.md says why each other test fails.
# KGO_TEST_RF=1 because minikafka is one node; KGO_TEST_RECORDS keeps the
# produce/consume ETL tests small enough for a 2-core CI machine.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=allow
if [ "${1:-}" = "-all" ]; then mode=all; fi

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]+"${pids[@]}"}"; do
    if kill -0 "$p" 2>/dev/null; then
      kill -TERM "$p"
      wait "$p" || true
    fi
  done
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/minikafka" ./cmd/minikafka

# start_broker NAME [FLAG...]: a broker on a free port with data in
# $work/NAME and its log in $work/NAME.log; sets $port once it accepts.
start_broker() {
  local name=$1
  shift
  # A free port: bind :0, read it back, release it.
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  "$work/minikafka" -listen "127.0.0.1:$port" -advertise "127.0.0.1:$port" -data "$work/$name" \
    -durability never -group-initial-rebalance-delay 0 -log-level warn "$@" >"$work/$name.log" 2>&1 &
  local pid=$!
  pids+=("$pid")
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return; fi
    if ! kill -0 "$pid" 2>/dev/null; then echo "minikafka ($name) exited:"; cat "$work/$name.log"; exit 1; fi
    sleep 0.1
  done
  echo "minikafka ($name) did not listen within 10 s"
  exit 1
}

# The SCRAM tests (TestSCRAMAuth*) want a separate SASL listener.
start_broker scram -sasl-users kgo:kgo-secret -sasl-mechanisms SCRAM-SHA-256
export KGO_TEST_SCRAM_SEEDS="127.0.0.1:$port" KGO_TEST_SCRAM="kgo:kgo-secret"
# TestOAuthAuth wants an OAUTHBEARER listener with unsecured JWTs.
start_broker oauth -sasl-oauthbearer
export KGO_TEST_OAUTH_SEEDS="127.0.0.1:$port"
start_broker data

export KGO_SEEDS="127.0.0.1:$port" KGO_TEST_RF=1 KGO_TEST_RECORDS="${KGO_TEST_RECORDS:-50000}" KGO_LOG_LEVEL=none

if [ -n "${KGO_SUITE_RUN:-}" ]; then
  run=$KGO_SUITE_RUN # debugging one test: KGO_SUITE_RUN='^TestGroupETL$'
elif [ "$mode" = all ]; then
  run='.'
else
  names=$(grep -v '^\s*#' compat_test/kgo_suite.allow | grep -v '^\s*$' | paste -sd'|')
  if [ -z "$names" ]; then echo "kgo_suite.allow is empty"; exit 1; fi
  run="^(${names})\$"
fi

skip=()
if [ -n "${KGO_SUITE_SKIP:-}" ]; then skip=(-skip "$KGO_SUITE_SKIP"); fi

set +e
go test -count=1 -timeout "${KGO_SUITE_TIMEOUT:-15m}" -run "$run" "${skip[@]+"${skip[@]}"}" -v \
  github.com/twmb/franz-go/pkg/kgo >"$work/test.log" 2>&1
rc=$?
set -e
grep -E '^(--- |=== RUN|ok|FAIL|PASS|panic)' "$work/test.log" | grep -v '=== RUN' || true
if [ "$mode" = all ]; then
  echo "passing top-level tests:"
  grep -E '^--- PASS: Test' "$work/test.log" | awk '{print $3}' | sort
fi
if [ $rc -ne 0 ]; then
  echo "--- kgo suite failed (exit $rc); last test output:"
  tail -60 "$work/test.log"
  echo "--- broker log tail:"
  tail -30 "$work/data.log"
fi
# An allowlisted test that skips (a missing environment variable, say)
# proves nothing: fail.
if [ "$mode" = allow ] && [ -z "${KGO_SUITE_RUN:-}" ] && grep -qE '^--- SKIP: Test' "$work/test.log"; then
  echo "--- allowlisted tests skipped:"
  grep -E '^--- SKIP: Test' "$work/test.log"
  exit 1
fi
exit $rc
