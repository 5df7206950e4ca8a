#!/usr/bin/env bash
# Installs the non-Go Kafka clients that compat_test drives: kcat and the two
# Python clients from Debian, kafkajs and its codecs and the two Node schema
# registry clients from npm (exact versions in package-lock.json); a JDK and
# Maven with Apache Kafka's Java client from Maven Central
# (compat_test/java/pom.xml, into ~/.m2), and Apache Kafka's broker jars for
# the differential test (scripts/kafka-broker.sh --fetch); and Chromium for
# the console's browser tests.
# Idempotent: does nothing when everything is already there.
#
#   bash compat_test/install.sh
#
# The Go clients (kgo, sarama, kafka-go, confluent-kafka-go) come from go.mod.
set -euo pipefail
cd "$(dirname "$0")"

# Debian's python3 packages land in /usr/bin/python3's dist-packages; the tests
# run that interpreter, not whatever python3 is first on PATH.
# chromium: the console's browser tests (internal/console/browser_test.go).
# build-essential, libssl-dev, zlib1g-dev, libzstd-dev: building librdkafka
# and its test runner for librdkafka_suite.sh.
# openjdk-17-jdk-headless, maven: the Java client's scenarios (java_test.go).
# python3-venv: the schema registry's Python client (below).
debs=(kcat python3-confluent-kafka python3-kafka python3-pytest python3-snappy python3-lz4 python3-zstandard nodejs npm chromium
  build-essential libssl-dev zlib1g-dev libzstd-dev openjdk-17-jdk-headless maven python3-venv)
missing=()
for p in "${debs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
# nodejs/npm may come from elsewhere (e.g. NodeSource); only ask apt for them if absent.
if command -v node >/dev/null && command -v npm >/dev/null; then
  keep=()
  for p in "${missing[@]}"; do
    case "$p" in nodejs|npm) ;; *) keep+=("$p") ;; esac
  done
  missing=("${keep[@]+"${keep[@]}"}")
fi
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# npm ci wipes node_modules and rebuilds lz4's native addon, so run it only
# when the lockfile changed since the last install.
stamp=node_modules/.minikafka-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  npm ci --no-audit --no-fund
  echo "$want" > "$stamp"
fi

# confluent-kafka-python 2.x with its schema registry client and Avro,
# Protobuf and JSON Schema serdes (internal/schemaregistry's
# TestConfluentPython): Debian's python3-confluent-kafka is 1.x without
# them, so a venv from PyPI, outside git. protobuf stays on 4.25: 2.6's
# ProtobufDeserializer calls MessageFactory.GetPrototype, which 5.x
# removed. The tests find it at this path (or MINIKAFKA_SR_PYTHON).
srvenv=${MINIKAFKA_SR_VENV:-$HOME/.cache/minikafka/srvenv}
srpkg=('confluent-kafka[avro,json,protobuf,schemaregistry]==2.6.1' 'protobuf==4.25.8')
if [ ! -x "$srvenv/bin/python" ] || [ "$(cat "$srvenv/.minikafka-pkg" 2>/dev/null)" != "${srpkg[*]}" ]; then
  rm -rf "$srvenv"
  /usr/bin/python3 -m venv "$srvenv"
  "$srvenv/bin/pip" install -q --disable-pip-version-check "${srpkg[@]}"
  echo "${srpkg[*]}" >"$srvenv/.minikafka-pkg"
fi

# The Java module's dependencies (kafka-clients, kafka-streams) from Maven
# Central into ~/.m2, and its classes: TestJavaClient's own build is then
# offline work. Cheap when ~/.m2 already has them.
(cd java && mvn -B -q compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt)

# Apache Kafka 4.4's broker jars (Maven Central, into ~/.cache/minikafka) for
# TestKafkaDiff, which runs a real Kafka node next to minikafka.
bash ../scripts/kafka-broker.sh --fetch

# Apicurio Registry 3.3.3, Maven Central's runnable distribution (into
# ~/.cache/minikafka), for TestRegistryDiffApicurio, which sends the same
# Confluent API requests to it and to minikafka's registry. It needs Java 21
# or later (Debian's default here is 17; the machines carry a Temurin 25).
# A failed download leaves no partial copy (run.sh unpacks beside its place
# and moves it in whole); the test then skips and says why, as without Java.
if bash apicurio/run.sh --java >/dev/null 2>&1; then
  bash apicurio/run.sh --fetch || echo "compat_test/install.sh: Apicurio Registry could not be fetched; TestRegistryDiffApicurio will skip"
else
  echo "compat_test/install.sh: no Java 21+ found; TestRegistryDiffApicurio will skip"
fi

kcat -V >/dev/null
/usr/bin/python3 -c 'import confluent_kafka, kafka, snappy, lz4, zstandard, pytest'
node -e "require('kafkajs'); require('kafkajs-snappy'); require('kafkajs-lz4'); require('@mongodb-js/zstd'); require('@kafkajs/confluent-schema-registry'); require('@confluentinc/schemaregistry')"
"$srvenv/bin/python" -c 'import confluent_kafka.schema_registry.avro, confluent_kafka.schema_registry.protobuf, confluent_kafka.schema_registry.json_schema'
chromium --version >/dev/null
java -version 2>/dev/null
echo "compat_test/install.sh: kcat, python3-confluent-kafka, python3-kafka, kafkajs, kafka-clients (Java), chromium ready"
