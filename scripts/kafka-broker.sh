#!/usr/bin/env bash
# kafka-broker.sh runs one Apache Kafka 4.4 node (KRaft, combined broker and
# controller) from Maven Central's jars, in the foreground, for the
# benchmark harness (mkbench -kafka) and for manual compatibility checks.
#
#   scripts/kafka-broker.sh PORT DATA_DIR [CONTROLLER_PORT] [key=value ...]
#   scripts/kafka-broker.sh --fetch    # resolve the jars only, then exit
#   scripts/kafka-broker.sh --libs     # resolve them, print their directory
#
# PORT is the PLAINTEXT listener on 127.0.0.1; CONTROLLER_PORT (default
# PORT+1) the KRaft controller listener. Extra key=value pairs are appended
# to server.properties (e.g. log.flush.interval.messages=1 to fsync every
# batch, or group.share.enable=true). KAFKA_FORMAT_ARGS adds flags to the
# storage format step (e.g. "--feature share.version=1").
#
# The jars are resolved once with Maven into $KAFKA_CACHE (default
# $HOME/.cache/minikafka/kafka-4.4.0) and never enter git. DATA_DIR is
# formatted on first use. The script prints "listening on 127.0.0.1:PORT"
# once the port accepts connections, then Kafka's WARN and ERROR lines go
# to stderr (all of its log to DATA_DIR/server.log). It ends by exec'ing
# java, so its pid is the JVM's: SIGTERM stops Kafka cleanly.
# KAFKA_HEAP_OPTS overrides the heap (default -Xms1g -Xmx1g, as Kafka's own
# start script).
set -euo pipefail

# --fetch only resolves the jars (compat_test/install.sh, ahead of CI);
# --libs also prints where they are (Kafka's command-line tools for
# compat_test/librdkafka_suite.sh run from the same jars).
fetch_only=
if [ "${1:-}" = "--fetch" ] || [ "${1:-}" = "--libs" ]; then
	fetch_only=$1
elif [ $# -lt 2 ]; then
	echo "usage: $0 PORT DATA_DIR [CONTROLLER_PORT] [key=value ...] | --fetch | --libs" >&2
	exit 2
else
	port=$1
	data=$2
	shift 2
	cport=$((port + 1))
	if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then
		cport=$1
		shift
	fi
fi

version=4.4.0
cache=${KAFKA_CACHE:-$HOME/.cache/minikafka/kafka-$version}
libs=$cache/libs

# Resolve the broker and the storage tool's jars once; the stamp records
# the exact artifact list so a changed list resolves again.
artifacts="org.apache.kafka:kafka_2.13:$version org.apache.kafka:kafka-tools:$version org.apache.logging.log4j:log4j-slf4j-impl:2.25.5"
if [ ! -f "$cache/stamp" ] || [ "$(cat "$cache/stamp")" != "$artifacts" ]; then
	mkdir -p "$cache"
	{
		echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
		echo '<groupId>local.minikafka</groupId><artifactId>kafka-runtime</artifactId><version>1</version><packaging>pom</packaging><dependencies>'
		for a in $artifacts; do
			IFS=: read -r g n v <<<"$a"
			echo "<dependency><groupId>$g</groupId><artifactId>$n</artifactId><version>$v</version></dependency>"
		done
		echo '</dependencies></project>'
	} >"$cache/pom.xml"
	rm -rf "$libs"
	mvn -q -B -f "$cache/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$libs" >&2
	echo "$artifacts" >"$cache/stamp"
fi
if [ "$fetch_only" = --libs ]; then
	echo "$libs"
fi
if [ -n "$fetch_only" ]; then
	exit 0
fi

mkdir -p "$data"
data=$(cd "$data" && pwd)
cat >"$data/log4j2.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = $data/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
appender.err.type = Console
appender.err.name = err
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
appender.err.filter.threshold.type = ThresholdFilter
appender.err.filter.threshold.level = warn
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
rootLogger.appenderRef.err.ref = err
EOF

# Kafka's defaults except what a single local node needs.
{
	echo "process.roles=broker,controller"
	echo "node.id=1"
	echo "controller.quorum.voters=1@127.0.0.1:$cport"
	echo "listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport"
	echo "advertised.listeners=PLAINTEXT://127.0.0.1:$port"
	echo "controller.listener.names=CONTROLLER"
	echo "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
	echo "inter.broker.listener.name=PLAINTEXT"
	echo "log.dirs=$data/log"
	# One node: the internal topics cannot have three replicas.
	echo "offsets.topic.replication.factor=1"
	echo "transaction.state.log.replication.factor=1"
	echo "transaction.state.log.min.isr=1"
	echo "share.coordinator.state.topic.replication.factor=1"
	echo "share.coordinator.state.topic.min.isr=1"
	for kv in "$@"; do echo "$kv"; done
} >"$data/server.properties"

cp=$(printf '%s:' "$libs"/*.jar)
jvm=(${KAFKA_HEAP_OPTS:--Xms1g -Xmx1g} -XX:+UseG1GC -XX:MaxGCPauseMillis=20
	-XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent
	-Djava.awt.headless=true -Dlog4j2.configurationFile="$data/log4j2.properties" -cp "$cp")

if [ ! -f "$data/log/meta.properties" ]; then
	# A cluster ID is 16 random bytes in unpadded URL-safe base64 (what
	# StorageTool random-uuid prints, without a second JVM start); not one
	# starting with "-", which the tool would read as a flag.
	id=-
	while [[ $id == -* ]]; do id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '='); done
	# shellcheck disable=SC2086
	java "${jvm[@]}" kafka.tools.StorageTool format -t "$id" -c "$data/server.properties" ${KAFKA_FORMAT_ARGS:-} >&2
fi

# shellcheck source=scripts/announce-port.sh
. "$(dirname "$0")/announce-port.sh"
announce_port kafka-broker.sh "$port"

exec java "${jvm[@]}" kafka.Kafka "$data/server.properties"
