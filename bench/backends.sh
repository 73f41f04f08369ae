#!/bin/sh
# The VM against the Lua backend, hand-written Lua and expr-lang, as tables.
#
#   sh bench/backends.sh [file]         BenchmarkBackends: for each policy
#       and backend the median ns/record (wall clock) and cpu-ns/record (the
#       process's CPU time, the garbage collector's included) over COUNT
#       passes, allocs/record, and the VM's ratio to each other backend: the
#       median of the per-pass ratios of cpu-ns/record, so that a slow spell
#       of the machine, which hits all four backends of a pass alike,
#       cancels out.
#   sh bench/backends.sh ratios [file]  BenchmarkBackendRatios: the four
#       backends timed side by side on the same batches; medians of each
#       backend's ns/record and of the VM's ratios to the others.
#
# With a file of `go test -bench` output, the script only makes the table.
set -eu
COUNT=${COUNT:-5}
cd "$(dirname "$0")/.."
mode=table
if [ "${1:-}" = ratios ]; then
	mode=ratios
	shift
fi
if [ $# -ge 1 ]; then
	out=$1
else
	out=$(mktemp)
	if [ $mode = ratios ]; then
		bench=BenchmarkBackendRatios benchtime=${BENCHTIME:-100x}
	else
		bench=BenchmarkBackends benchtime=${BENCHTIME:-1s}
	fi
	go test ./conformance -run '^$' -bench "$bench" -benchmem \
		-count "$COUNT" -benchtime "$benchtime" -timeout 60m | tee "$out" >&2
fi

awklib='
function median(list,   n, i, j, t, a) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++) a[i] += 0
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
# keep notes the policies in the order of their first line.
function keep(pol) {
	if (!(pol in seen)) { seen[pol] = 1; order[++np] = pol }
}
# table prints the table: the line first, the header, and a row per
# policy, made by the row function of the mode.
function table(first,   k) {
	print first
	print ""
	print "| policy | vm | lua_transpiled | lua_handwritten | expr | lua_t ÷ vm | lua_h ÷ vm | expr ÷ vm |"
	print "|---|--:|--:|--:|--:|--:|--:|--:|"
	for (k = 1; k <= np; k++) row(order[k])
}'

if [ $mode = ratios ]; then
	grep '^BenchmarkBackendRatios/' "$out" | awk "$awklib"'
function row(pol) {
	printf "| %s | %.0f | %.0f | %.0f | %.0f | %.0f× | %.0f× | %.0f× |\n", pol,
		median(v[pol, "vm-ns/record"]), median(v[pol, "lua_t-ns/record"]),
		median(v[pol, "lua_h-ns/record"]), median(v[pol, "expr-ns/record"]),
		median(v[pol, "lua_t/vm"]), median(v[pol, "lua_h/vm"]), median(v[pol, "expr/vm"])
}
{
	split($1, p, "/"); pol = p[2]; sub(/-[0-9]+$/, "", pol)
	for (i = 3; i < NF; i += 2) v[pol, $(i + 1)] = v[pol, $(i + 1)] " " $i
	keep(pol)
}
END { table("ns/record (wall clock), medians; ratios: medians of the per-pass ratios") }'
	exit
fi

grep '^BenchmarkBackends/' "$out" | awk "$awklib"'
function ratio(pol, be,   n, i, a, b, r) {
	n = split(cpu[pol SUBSEP be], a, " "); split(cpu[pol SUBSEP "vm"], b, " ")
	r = ""
	for (i = 1; i <= n; i++) if (b[i] > 0) r = r " " a[i] / b[i]
	return median(r)
}
function cell(pol, be) {
	return sprintf("%.0f / %.0f (%d)", median(ns[pol SUBSEP be]), median(cpu[pol SUBSEP be]), allocs[pol SUBSEP be])
}
function row(pol) {
	printf "| %s | %s | %s | %s | %s | %.0f× | %.0f× | %.0f× |\n", pol,
		cell(pol, "vm"), cell(pol, "lua_transpiled"), cell(pol, "lua_handwritten"), cell(pol, "expr"),
		ratio(pol, "lua_transpiled"), ratio(pol, "lua_handwritten"), ratio(pol, "expr")
}
{
	split($1, p, "/"); pol = p[2]; be = p[3]; sub(/-[0-9]+$/, "", be)
	c = 0
	for (i = 2; i < NF; i++) {
		if ($(i + 1) == "ns/record") n = $i
		if ($(i + 1) == "cpu-ns/record") c = $i
		if ($(i + 1) == "allocs/op") al = $i
	}
	key = pol SUBSEP be
	ns[key] = ns[key] " " n; cpu[key] = cpu[key] " " (c ? c : n); allocs[key] = al
	keep(pol)
}
END { table("ns/record / cpu-ns/record (allocs/record), medians; ratio = median of the per-pass cpu-ns ratios") }'
