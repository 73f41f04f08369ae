#!/bin/sh
# B1, whole process: tail → policy → null over the deterministic data.
# `policyrun bench pipeline` (docs/bench.md) does the same as a Go command,
# runs interleaved, JSON results; `policyrun bench report` draws them.
#
# Generates the data with `policyrun gen` (docs/pipeline-tail.md, "policyrun
# gen": flat, 1,000,000
# JSON lines of about 256 bytes; k8s, 300,000 records carrying the
# kubernetes map, and the same number of CRI lines), then runs
# `policyrun run` (tail with the json parser -> one policy -> null, exiting
# at the end of input) for each of the nine policies of conformance/policies
# with backend vm, backend lua (the transpiled policy) and lua_script (the
# hand-written Fluent Bit filter of conformance/baselines/lua), plus a run
# with no filter. Each run is repeated RUNS times (default 5), interleaved:
# round after round, each round runs every pipeline once, so that a slow
# spell of the (shared, noisy) machine hits every run alike. The table gives
# the median CPU seconds (user+sys, from the run summary's getrusage), CPU
# seconds per million records, the median peak RSS, and the ratio of the
# median CPU to that of the run it is compared with (policies over flat
# lines to 1-noop, those over k8s records to the run with no filter).
#
# Usage: bench/pipeline.sh [DATA_DIR]   (default: $TMPDIR/policyrun-bench)
# SEED, RUNS, BACKENDS ("vm lua lua_script"), POLICIES (numbers, default
# "1 2 3 4 5 6 7 8 9", and "dedupe": bench/policies/dedupe.policy, a dedupe
# over the flat lines with 100,000 keys, compared with 1-noop; it has no
# lua_script baseline) and the counts FLAT, K8S can be overridden from the
# environment. BINS ("label=path ...") runs those policyrun binaries side by
# side, interleaved in each round, instead of the one built from this tree
# (which still generates the data): e.g. BINS="before=/tmp/a after=/tmp/b".
# CG=1 runs every pipeline under valgrind --tool=cachegrind and gives its
# instructions (whole process, every thread) in place of CPU seconds: a
# count that a busy machine does not change, for when timings are too noisy
# to compare (a run takes some 50 times longer; RUNS=1 or 2 is enough).
set -eu

cd "$(dirname "$0")/.."
data=${1:-${TMPDIR:-/tmp}/policyrun-bench}
seed=${SEED:-1}
flat=${FLAT:-1000000}
k8s=${K8S:-300000}
mkdir -p "$data"

go build -o "$data/policyrun" ./cmd/policyrun

# gen KIND COUNT: writes $data/KIND.log unless it is there from the same
# binary, count and seed already.
gen() {
	file="$data/$1.log"
	stamp="$1 $2 $seed $(sha256sum "$data/policyrun" | cut -d' ' -f1)"
	if [ -f "$file" ] && [ "$(cat "$file.stamp" 2>/dev/null)" = "$stamp" ]; then
		echo "kept      $file"
		return
	fi
	start=$(date +%s.%N)
	"$data/policyrun" gen "$1" --count "$2" --seed "$seed" -o "$file"
	end=$(date +%s.%N)
	echo "$stamp" >"$file.stamp"
	printf 'generated %s: %d lines, %d bytes in %.2f s\n' "$file" \
		"$(wc -l <"$file")" "$(wc -c <"$file")" "$(awk "BEGIN { print $end - $start }")"
}

gen flat "$flat"
gen cri "$k8s"
gen k8s "$k8s"

runs=${RUNS:-5}
backends=${BACKENDS:-vm lua lua_script}
policies=${POLICIES:-1 2 3 4 5 6 7 8 9}
bins=${BINS:-policyrun=$data/policyrun}
root=$(pwd)

# median FILE COLUMN: the median of a column of numbers.
median() {
	sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
}

# filter BACKEND POLICY: the filters section of the config.
filter() {
	case $1 in
	lua_script) printf '  filters:\n    - name: policy\n      backend: lua_script\n      file: %s\n      call: cb\n' "$root/conformance/baselines/lua/$2.lua" ;;
	*) [ "$2" != dedupe ] || { printf '  filters:\n    - name: policy\n      backend: %s\n      file: %s\n' "$1" "$root/bench/policies/dedupe.policy"; return; }
	   printf '  filters:\n    - name: policy\n      backend: %s\n      file: %s\n' "$1" "$root/conformance/policies/$2.policy" ;;
	esac
}

# config NAME DATA [FILTER_YAML]: writes the pipeline of a run and adds it
# to the list of runs (NAME and DATA kind, one a line).
config() {
	name=$1 log=$2 filter=${3:-}
	safe=$(echo "$name" | tr / _)
	{
		printf 'pipeline:\n  inputs:\n    - name: tail\n      path: %s\n' "$data/$log.log"
		printf '      parser: json\n      read_from_head: true\n      exit_on_eof: true\n      poll_interval: 50ms\n'
		[ -z "$filter" ] || printf '%s\n' "$filter"
		printf '  outputs:\n    - name: null\n'
	} >"$data/$safe.yaml"
	echo "$name $log" >>"$data/runs.list"
}

: >"$data/runs.list"
config none/flat flat
config none/k8s k8s
for p in 1-noop 2-drop-all 3-edit 4-read5-edit 5-k8s-edit 6-k8s-lift 7-policy-then-chain 8-chain-then-policy 9-output-side dedupe; do
	case " $policies " in *" ${p%%-*} "*) ;; *) continue ;; esac
	case $p in 5-* | 6-*) log=k8s ;; *) log=flat ;; esac
	for b in $backends; do
		[ "$p/$b" != dedupe/lua_script ] || continue
		config "$p/$b" "$log" "$(filter "$b" "$p")"
	done
done

# once BIN NAME: one run of a pipeline with binary BIN; appends
# "records cpu rss" to its runs file.
once() {
	bin=$1 safe=$(echo "$2" | tr / _)
	label=${bin%%=*} path=${bin#*=}
	out="$data/$safe.$label"
	if [ -n "${CG:-}" ]; then
		valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
			"$path" run "$data/$safe.yaml" 2>"$out.err" >/dev/null || { cat "$out.err"; exit 1; }
	else
		"$path" run "$data/$safe.yaml" 2>"$out.err" >/dev/null || { cat "$out.err"; exit 1; }
	fi
	# records: in N, ... / time: wall Ws, user Us, sys Ss; peak RSS R MiB
	awk '/^records:/ { gsub(",", ""); n = $3 }
	     /^time:/ {
		for (i = 1; i < NF; i++) {
			v = $(i + 1); gsub(/[s;,]/, "", v)
			if ($i == "user" || $i == "sys") cpu += v
			if ($i == "RSS") rss = v
		}
	     }
	     /I +refs:/ { v = $NF; gsub(",", "", v); ir = v / 1e9 }
	     END { printf "%d %.3f %.1f\n", n, (ir > 0 ? ir : cpu), rss }' "$out.err" >>"$out.runs"
}

while read -r name log; do
	for bin in $bins; do : >"$data/$(echo "$name" | tr / _).${bin%%=*}.runs"; done
done <"$data/runs.list"
i=0
while [ $i -lt "$runs" ]; do
	while read -r name log; do
		for bin in $bins; do once "$bin" "$name"; done
	done <"$data/runs.list"
	i=$((i + 1))
	echo "round $i of $runs done" >&2
done

unit="CPU s"
[ -z "${CG:-}" ] || unit="G instr"
printf '\n%-32s %9s %8s %10s %8s %7s\n' "run (median of $runs)" records "$unit" "$unit/M" "RSS MiB" ratio
for bin in $bins; do
	label=${bin%%=*}
	[ "$bins" = "${bins#* }" ] || printf '%s:\n' "$label"
	while read -r name log; do
		f="$data/$(echo "$name" | tr / _).$label.runs"
		n=$(median "$f" 1) cpu=$(median "$f" 2) rss=$(median "$f" 3)
		case $name in
		none/*) base= ;;
		*) if [ "$log" = k8s ]; then base=none/k8s; else base=1-noop/${name#*/}; fi ;;
		esac
		ratio=-
		bf="$data/$(echo "$base" | tr / _).$label.runs"
		if [ -n "$base" ] && [ -f "$bf" ] && [ "$base" != "$name" ]; then
			ratio=$(awk -v a="$cpu" -v b="$(median "$bf" 2)" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
		fi
		awk -v name="$name" -v n="$n" -v cpu="$cpu" -v rss="$rss" -v r="$ratio" \
			'BEGIN { printf "%-32s %9d %8.3f %10.3f %8.1f %7s\n", name, n, cpu, (n > 0 ? cpu / n * 1e6 : 0), rss, r }'
	done <"$data/runs.list"
done
