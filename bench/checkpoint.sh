#!/bin/sh
# B4: checkpoint save and load, JSON against protobuf, in one run.
# Prints the median of COUNT runs (default 5) for every case, then the
# ratios at 1,000 files that the targets of docs/pipeline-tail.md, "Speed
# and size (B4)", are stated in.
#
# Usage: bench/checkpoint.sh   (COUNT=n to change the number of runs)
set -eu

cd "$(dirname "$0")/.."
count=${COUNT:-5}
out=$(go test ./pipeline/checkpoint -run '^$' -bench BenchmarkCheckpoint -benchmem -count "$count")

echo "$out" | awk '
/^BenchmarkCheckpoint/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i += 2) v[name, $(i+1), ++n[name, $(i+1)]] = $i
	if (!(name in seen)) { seen[name] = 1; order[++names] = name }
}
function median(name, unit,   k, a, i, j, t) {
	k = n[name, unit]
	for (i = 1; i <= k; i++) a[i] = v[name, unit, i] + 0
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
END {
	printf "%-46s %12s %14s %12s %10s\n", "case (median of runs)", "ns/op", "bytes/ckpt", "B/op", "allocs/op"
	for (i = 1; i <= names; i++) {
		m = order[i]
		printf "%-46s %12.0f %14.0f %12.0f %10.0f\n", m, median(m, "ns/op"), median(m, "bytes/checkpoint"), median(m, "B/op"), median(m, "allocs/op")
	}
	p = "BenchmarkCheckpoint/%s/%s/files=1000"
	sj = median(sprintf(p, "save", "json"), "ns/op"); sp = median(sprintf(p, "save", "protobuf"), "ns/op")
	lj = median(sprintf(p, "load", "json"), "ns/op"); lp = median(sprintf(p, "load", "protobuf"), "ns/op")
	bj = median(sprintf(p, "save", "json"), "bytes/checkpoint"); bp = median(sprintf(p, "save", "protobuf"), "bytes/checkpoint")
	printf "\nat 1,000 files: save %.1fx faster, load %.1fx faster, size %.1f%% of JSON\n", sj / sp, lj / lp, 100 * bp / bj
	printf "targets:        save >= 5x,       load >= 5x,       size <= 65%%\n"
}'
