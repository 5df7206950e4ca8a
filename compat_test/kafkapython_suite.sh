#!/usr/bin/env bash
# Runs kafka-python's own integration tests (the test/integration directory
# of its PyPI sdist, 3.x) against a minikafka binary started here on a free
# port, with the broker settings kafka-python's fixture gives Kafka
# (group.min.session.timeout.ms=1000, an authorizer that lets everyone in
# while no ACL names a resource, num.partitions=4).
#
#   bash compat_test/kafkapython_suite.sh
#
# KAFKAPYTHON_SUITE_K='expr' passes -k to pytest (debugging one test).
#
# The sdist and a venv with pytest live in a cache outside git
# ($KAFKAPYTHON_CACHE, default ~/.cache/minikafka-kafkapython); nothing of
# kafka-python is committed. The sdist ships test/integration but not the
# two small modules it imports from test/ (service.py, __init__.py): the
# fixture is pointed at our broker with KAFKA_URI, so only ExternalService
# is used, and this script writes a stand-in for it.
#
# Every test must pass. The SASL module skips itself for an external broker
# and the SSL module is left out: both start a Kafka of their own (its
# jars and kafka.properties templates, which the sdist does not carry).
# Snappy, lz4 and zstd are installed so that no compression test skips.
# The run fails if fewer
# than $expect tests passed, so a test that silently turns into a skip is
# noticed.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${KAFKAPYTHON_VERSION:-3.0.12}
expect=${KAFKAPYTHON_EXPECT_PASSED:-55}
cache=${KAFKAPYTHON_CACHE:-$HOME/.cache/minikafka-kafkapython}
src=$cache/kafka_python-$version
venv=$cache/venv

mkdir -p "$cache"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import pytest, pytest_timeout, pytest_mock, lz4, zstandard, snappy' 2>/dev/null; then
  "$venv/bin/pip" install -q pytest pytest-mock pytest-timeout lz4 zstandard crc32c python-snappy
fi
if [ ! -d "$src/test/integration" ]; then
  "$venv/bin/pip" download -q --no-binary :all: --no-deps -d "$cache/dl" "kafka-python==$version"
  tar -xzf "$cache/dl/kafka_python-$version.tar.gz" -C "$cache"
fi
# The stand-ins the sdist lacks (ours, not kafka-python's).
touch "$src/test/__init__.py"
cat >"$src/test/service.py" <<'PY'
"""Stand-in for kafka-python's test/service.py, absent from its sdist."""


class ExternalService:
    """A broker that runs elsewhere: minikafka, started by the script."""

    def __init__(self, host, port):
        self.host, self.port = host, port

    def open(self):
        pass

    def stop(self):
        pass

    def close(self):
        pass

    def dump_logs(self):
        pass

    def wait_for(self, *args, **kwargs):
        return True


class SpawnedService:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("minikafka's kafka-python suite runs against an external broker only (KAFKA_URI)")
PY

work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    wait "$pid" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/minikafka" ./cmd/minikafka
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
"$work/minikafka" -listen "127.0.0.1:$port" -advertise "127.0.0.1:$port" -data "$work/data" \
  -durability never -group-initial-rebalance-delay 0 -log-level warn \
  -default-partitions 4 -group-min-session-timeout 1s -authorizer -allow-everyone-if-no-acl-found >"$work/broker.log" 2>&1 &
pid=$!
for i in $(seq 1 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then echo "minikafka exited:"; cat "$work/broker.log"; exit 1; fi
  if [ "$i" = 100 ]; then echo "minikafka did not listen within 10 s"; exit 1; fi
  sleep 0.1
done

k=()
if [ -n "${KAFKAPYTHON_SUITE_K:-}" ]; then k=(-k "$KAFKAPYTHON_SUITE_K"); fi
set +e
# KAFKA_ROOT: the fixture insists that a Kafka installation directory
# exists even for an external broker; an empty one does.
mkdir -p "$cache/kafka-root"
(cd "$src" && KAFKA_VERSION=4.2.0 KAFKA_URI="kafka://127.0.0.1:$port" KAFKA_ROOT="$cache/kafka-root" \
  timeout 900 "$venv/bin/python" -m pytest -q -p no:cacheprovider -o log_level=WARNING \
  --timeout=120 --tb=native -rfEs --ignore=test/integration/test_ssl_integration.py "${k[@]+"${k[@]}"}" test/integration) >"$work/test.log" 2>&1
rc=$?
set -e
summary=$(grep -E '[0-9]+ (passed|failed|errors?|skipped).* in [0-9.]+s' "$work/test.log" | tail -1 | tr -d '=' || true)
grep -E '^(FAILED|ERROR|SKIPPED)' "$work/test.log" || true
echo "kafka-python $version integration suite: ${summary:-no summary}"
passed=$(echo "$summary" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' || echo 0)
if [ $rc -ne 0 ]; then
  echo "--- kafka-python suite failed (exit $rc); last test output:"
  tail -80 "$work/test.log"
  echo "--- broker log tail:"
  tail -30 "$work/broker.log"
  exit 1
fi
if [ -z "${KAFKAPYTHON_SUITE_K:-}" ] && [ "$passed" -lt "$expect" ]; then
  echo "--- only $passed tests passed, expected $expect"
  exit 1
fi
