#!/bin/sh
# B4: checkpoint save and load, JSON against protobuf, in one run.
# Prints the median of COUNT runs (default 5) for every case, then the
# ratios at 1,000 files that docs/pipeline-tail.md, "Speed and size (B4)",
# states its figures in.
#
# Usage: bench/checkpoint.sh          (COUNT=n to change the number of runs)
#        bench/checkpoint.sh FILE     summarise go test -bench output saved
#                                     in FILE instead (e.g. runs of an older
#                                     commit's test binary, interleaved with
#                                     this one's)
set -eu

cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then
	out=$(cat "$1")
else
	count=${COUNT:-5}
	out=$(go test ./pipeline/checkpoint -run '^$' -bench BenchmarkCheckpoint -benchmem -count "$count")
fi

echo "$out" | awk '
/^BenchmarkCheckpoint/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i += 2) v[name, $(i+1), ++n[name, $(i+1)]] = $i
	if (!(name in seen)) { seen[name] = 1; order[++names] = name }
}
function median(name, unit,   k, a, i, j, t) {
	k = n[name, unit]
	if (k == 0) return 0
	for (i = 1; i <= k; i++) a[i] = v[name, unit, i] + 0
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
function ratio(a, b) { return b > 0 ? sprintf("%.1fx", a / b) : "-" }
END {
	printf "%-50s %5s %12s %14s %14s %12s %10s\n", "case (median of runs)", "runs", "ns/op", "bytes/ckpt", "written-B/save", "B/op", "allocs/op"
	for (i = 1; i <= names; i++) {
		m = order[i]
		printf "%-50s %5d %12.0f %14.0f %14.0f %12.0f %10.0f\n", m, n[m, "ns/op"], median(m, "ns/op"), median(m, "bytes/checkpoint"), median(m, "written-B/save"), median(m, "B/op"), median(m, "allocs/op")
	}
	p = "BenchmarkCheckpoint/%s/%s/files=1000"
	sj = median(sprintf(p, "save", "json"), "ns/op"); sp = median(sprintf(p, "save", "protobuf"), "ns/op")
	s1j = median(sprintf(p, "save1", "json"), "ns/op"); s1p = median(sprintf(p, "save1", "protobuf"), "ns/op")
	snp = median(sprintf(p, "snapshot", "protobuf"), "ns/op")
	lj = median(sprintf(p, "load", "json"), "ns/op"); lp = median(sprintf(p, "load", "protobuf"), "ns/op")
	bj = median(sprintf(p, "save", "json"), "bytes/checkpoint"); bp = median(sprintf(p, "save", "protobuf"), "bytes/checkpoint")
	printf "\nat 1,000 files, protobuf against JSON: save %s, snapshot %s, save of 1 changed file %s, load %s faster; size %.1f%% of JSON\n", ratio(sj, sp), ratio(sj, snp), ratio(s1j, s1p), ratio(lj, lp), 100 * bp / bj
	printf "targets:                               save >= 8x, snapshot >= 8x, load >= 8x, size <= 65%%\n"
}'
