#!/usr/bin/env bash
# run.sh runs Apicurio Registry 3.3.3 (Maven Central's distribution, see
# pom.xml) in the foreground with in-memory storage, for
# compat_test/registrydiff_test.go and for comparing by hand. Its
# Confluent-compatible API is under http://127.0.0.1:PORT/apis/ccompat/v7;
# MGMT_PORT (default PORT+1) is Quarkus's management interface (health,
# metrics), which Apicurio's build enables.
#
#   compat_test/apicurio/run.sh PORT [MGMT_PORT] # fetch if needed, then run
#   compat_test/apicurio/run.sh --fetch # fetch only, then exit
#   compat_test/apicurio/run.sh --java  # print the Java 21+ it would use
#   compat_test/apicurio/run.sh --fetched # exit 0 if fetched, 1 if not
#
# The application is unpacked once into $APICURIO_CACHE (default
# $HOME/.cache/minikafka/apicurio-3.3.3) and never enters git. Apicurio 3.3.3
# is built for Java 21: $APICURIO_JAVA if set, else the first java of 21 or
# later among PATH's, $JAVA_HOME's and /usr/lib/jvm's (exit 3 if none). The
# script prints "listening on 127.0.0.1:PORT" once the port accepts
# connections (Quarkus opens it only when the application has started) and
# ends by exec'ing java, so its pid is the JVM's: SIGTERM stops it.
# APICURIO_HEAP overrides the heap (default -Xmx512m).
set -euo pipefail

version=3.3.3
here=$(cd "$(dirname "$0")" && pwd)
cache=${APICURIO_CACHE:-$HOME/.cache/minikafka/apicurio-$version}
app=$cache/quarkus-app

# java_major prints a java binary's major version (17, 21, 25).
java_major() {
	"$1" -XshowSettings:properties -version 2>&1 |
		sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p'
}

find_java() {
	local c m
	for c in ${APICURIO_JAVA:-} "$(command -v java || true)" "${JAVA_HOME:+$JAVA_HOME/bin/java}" /usr/lib/jvm/*/bin/java; do
		[ -n "$c" ] && [ -x "$c" ] || continue
		m=$(java_major "$c")
		if [ -n "$m" ] && [ "$m" -ge 21 ]; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

case "${1:-}" in
--java)
	if ! find_java; then
		echo "run.sh: no Java 21 or later (Apicurio Registry $version needs one); set APICURIO_JAVA" >&2
		exit 3
	fi
	exit 0
	;;
--fetched)
	[ -f "$app/quarkus-run.jar" ]
	exit
	;;
--fetch | [0-9]*) ;;
*)
	echo "usage: $0 PORT [MGMT_PORT] | --fetch | --fetched | --java" >&2
	exit 2
	;;
esac

if [ ! -f "$app/quarkus-run.jar" ]; then
	# Unpack beside the final place and move it in whole, so an interrupted
	# fetch never looks like a complete one.
	rm -rf "$cache/unpacking"
	mvn -q -B -f "$here/pom.xml" package -Dapicurio.cache="$cache" -Dapicurio.dir="$cache/unpacking" >&2
	rm -rf "$app"
	mv "$cache/unpacking" "$app"
fi
if [ "$1" = --fetch ]; then
	exit 0
fi
port=$1
mport=${2:-$((port + 1))}

if ! java=$(find_java); then
	echo "run.sh: no Java 21 or later (Apicurio Registry $version needs one); set APICURIO_JAVA" >&2
	exit 3
fi

# shellcheck source=scripts/announce-port.sh
. "$here/../../scripts/announce-port.sh"
announce_port run.sh "$port"

# Apicurio's defaults (storage kind sql on an in-memory H2 database, no
# authentication, global compatibility NONE) except: loopback only, the
# ports asked for, no access log.
cd "$app"
# shellcheck disable=SC2086
exec "$java" ${APICURIO_HEAP:--Xmx512m} \
	-Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$port" \
	-Dquarkus.management.host=127.0.0.1 -Dquarkus.management.port="$mport" \
	-Dquarkus.http.access-log.enabled=false \
	-Dapicurio.storage.kind=sql -Dapicurio.storage.sql.kind=h2 \
	-jar quarkus-run.jar
