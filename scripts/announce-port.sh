# announce_port NAME PORT, sourced by scripts that end by exec'ing a JVM
# service (scripts/kafka-broker.sh, compat_test/apicurio/run.sh): prints
# "listening on 127.0.0.1:PORT" once the port accepts connections (bounded:
# 120 s), from a background child, since the script itself becomes the JVM.
announce_port() {
	local name=$1 port=$2
	(
		for _ in $(seq 1200); do
			if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
				echo "listening on 127.0.0.1:$port"
				exit 0
			fi
			sleep 0.1
		done
		echo "$name: port $port not open after 120 s" >&2
	) &
}
