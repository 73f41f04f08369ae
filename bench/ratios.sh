#!/bin/sh
# BenchmarkBackendRatios as a table: for each policy the median over COUNT
# passes of each backend's ns/record and of the VM's ratios to the others,
# all four backends measured side by side on the same batches.
#
# Usage: sh bench/ratios.sh [file]   (with a file of `go test -bench`
# output, it only makes the table)
set -eu
COUNT=${COUNT:-5}
BENCHTIME=${BENCHTIME:-100x}
cd "$(dirname "$0")/.."
if [ $# -ge 1 ]; then
	out=$1
else
	out=$(mktemp)
	go test ./conformance -run '^$' -bench BenchmarkBackendRatios \
		-count "$COUNT" -benchtime "$BENCHTIME" -timeout 60m | tee "$out" >&2
fi
grep '^BenchmarkBackendRatios/' "$out" | awk '
function median(list,   n, i, j, t, a) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++) a[i] += 0
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
	split($1, p, "/"); pol = p[2]; sub(/-[0-9]+$/, "", pol)
	for (i = 3; i < NF; i += 2) v[pol, $(i + 1)] = v[pol, $(i + 1)] " " $i
	if (!(pol in seen)) { seen[pol] = 1; order[++np] = pol }
}
END {
	print "ns/record (wall clock), medians; ratios: medians of the per-pass ratios"
	print ""
	print "| policy | vm | lua_transpiled | lua_handwritten | expr | lua_t ÷ vm | lua_h ÷ vm | expr ÷ vm |"
	print "|---|--:|--:|--:|--:|--:|--:|--:|"
	for (k = 1; k <= np; k++) {
		pol = order[k]
		printf "| %s | %.0f | %.0f | %.0f | %.0f | %.0f× | %.0f× | %.0f× |\n", pol,
			median(v[pol, "vm-ns/record"]), median(v[pol, "lua_t-ns/record"]),
			median(v[pol, "lua_h-ns/record"]), median(v[pol, "expr-ns/record"]),
			median(v[pol, "lua_t/vm"]), median(v[pol, "lua_h/vm"]), median(v[pol, "expr/vm"])
	}
}'
