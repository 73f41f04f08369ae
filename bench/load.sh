# The load of B5 against a server, for bench/otlp.sh and bench/collector.sh,
# which source this after cd to the repository. The load's size is
# policyrun bench otlp's (its flags' defaults, policyrun bench otlp -h),
# each overridden only when the environment sets it: RECORDS, WARMUP,
# CLIENTS. RUNS is how many times each case runs, 3 unless set. Sets a
# temporary directory $tmp, removed at the end with the server ($server,
# when one runs), the server's $port, $runs, and:
#
#   load POLICYRUN ENCODING WAIT  loads the server at $port with POLICYRUN's
#                                 bench otlp (WAIT: how long it may take
#                                 to listen) and prints its figures: CPU s
#                                 per million records, records/s, RSS
#                                 steady and peak MiB, p50 and p99 ms, and
#                                 the records sent, warm-up included
#   stop                          stops the server
#   median                        the median of the numbers on stdin
runs=${RUNS:-3}
tmp=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
port=$((20000 + $$ % 20000))

load() {
	"$1" bench otlp --url "http://127.0.0.1:$port/v1/logs" --wait "$3" ${CLIENTS:+--clients "$CLIENTS"} \
		${RECORDS:+--records "$RECORDS"} ${WARMUP:+--warmup "$WARMUP"} --encoding "$2" --server-pid "$server" \
		>"$tmp/bench.out" 2>"$tmp/bench.err" || { cat "$tmp/bench.err" "$tmp/server.log" >&2; exit 1; }
	# records N, warmup W, …: R records/s …; request p50 A ms, p99 B ms; …
	# server: C CPU s for N records: X CPU s per million; RSS steady S MiB, peak P MiB
	awk '
		/records\/s/ { for (i = 1; i <= NF; i++) { if ($i == "records/s") rps = $(i-1); if ($i == "p50") p50 = $(i+1); if ($i == "p99") p99 = $(i+1)
			if ($i == "records" && i == 1) n = $(i+1) + 0; if ($i == "warmup") w = $(i+1) + 0 } }
		/^server:/ { for (i = 1; i <= NF; i++) { if ($i == "per") cpu = $(i-3); if ($i == "steady") st = $(i+1); if ($i == "peak") pk = $(i+1) } }
		END { printf "%s %s %s %s %s %s %d\n", cpu, rps, st, pk, p50, p99, n + w }' "$tmp/bench.out"
}

stop() {
	kill -TERM "$server"
	wait "$server" || true
	server=
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
