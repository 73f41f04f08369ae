#!/bin/sh
# BenchmarkBackends as a table: the median ns/record and allocs/record of
# each policy on each backend over COUNT runs, and the VM's ratio to the
# others. Usage: sh bench/backends.sh [file]  (with a file of `go test
# -bench` output, it only makes the table).
set -eu
COUNT=${COUNT:-5}
BENCHTIME=${BENCHTIME:-50000x}
cd "$(dirname "$0")/.."
if [ $# -ge 1 ]; then
	out=$1
else
	out=$(mktemp)
	go test ./conformance -run '^$' -bench BenchmarkBackends -benchmem \
		-count "$COUNT" -benchtime "$BENCHTIME" | tee "$out" >&2
fi
grep '^BenchmarkBackends/' "$out" | awk '
function median(key,   n, i, j, t, a) {
	n = split(vals[key], a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
	split($1, p, "/"); pol = p[2]; be = p[3]; sub(/-[0-9]+$/, "", be)
	for (i = 2; i < NF; i++) {
		if ($(i + 1) == "ns/record") ns = $i
		if ($(i + 1) == "allocs/op") al = $i
	}
	key = pol SUBSEP be
	vals[key] = vals[key] " " ns; allocs[key] = al
	if (!(pol in seen)) { seen[pol] = 1; order[++np] = pol }
}
END {
	printf "| policy | vm | lua_transpiled | lua_handwritten | expr | vm ratio: lua_t / lua_h / expr |\n"
	printf "|---|---|---|---|---|---|\n"
	for (k = 1; k <= np; k++) {
		pol = order[k]
		v = median(pol SUBSEP "vm"); lt = median(pol SUBSEP "lua_transpiled")
		lh = median(pol SUBSEP "lua_handwritten"); ex = median(pol SUBSEP "expr")
		printf "| %s | %.0f (%d) | %.0f (%d) | %.0f (%d) | %.0f (%d) | %.0fx / %.0fx / %.0fx |\n", pol,
			v, allocs[pol SUBSEP "vm"], lt, allocs[pol SUBSEP "lua_transpiled"],
			lh, allocs[pol SUBSEP "lua_handwritten"], ex, allocs[pol SUBSEP "expr"],
			lt / v, lh / v, ex / v
	}
}'
