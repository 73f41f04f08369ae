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
# with no filter. Each run is repeated RUNS times (default 5); the table
# gives the median CPU seconds (user+sys, from the run summary's getrusage),
# CPU seconds per million records, and the median peak RSS.
#
# Usage: bench/pipeline.sh [DATA_DIR]   (default: $TMPDIR/policyrun-bench)
# SEED, RUNS, BACKENDS ("vm lua lua_script") and the counts FLAT, K8S can be
# overridden from the environment.
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
root=$(pwd)

# median FILE COLUMN: the median of a column of numbers.
median() {
	sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
}

# run NAME DATA [FILTER_YAML]: RUNS runs of one pipeline; prints a table row.
run() {
	name=$1 log=$2 filter=${3:-}
	safe=$(echo "$name" | tr / _)
	cfg="$data/$safe.yaml"
	{
		printf 'pipeline:\n  inputs:\n    - name: tail\n      path: %s\n' "$data/$log.log"
		printf '      parser: json\n      read_from_head: true\n      exit_on_eof: true\n      poll_interval: 50ms\n'
		[ -z "$filter" ] || printf '%s\n' "$filter"
		printf '  outputs:\n    - name: null\n'
	} >"$cfg"
	: >"$data/$safe.runs"
	i=0
	while [ $i -lt "$runs" ]; do
		"$data/policyrun" run "$cfg" 2>"$data/$safe.err" >/dev/null || { cat "$data/$safe.err"; exit 1; }
		# records: in N, ... / time: wall Ws, user Us, sys Ss; peak RSS R MiB
		awk '/^records:/ { gsub(",", ""); n = $3 }
		     /^time:/ {
			for (i = 1; i < NF; i++) {
				v = $(i + 1); gsub(/[s;,]/, "", v)
				if ($i == "user" || $i == "sys") cpu += v
				if ($i == "RSS") rss = v
			}
		     }
		     END { printf "%d %.3f %.1f\n", n, cpu, rss }' "$data/$safe.err" >>"$data/$safe.runs"
		i=$((i + 1))
	done
	n=$(median "$data/$safe.runs" 1)
	cpu=$(median "$data/$safe.runs" 2)
	rss=$(median "$data/$safe.runs" 3)
	awk -v name="$name" -v n="$n" -v cpu="$cpu" -v rss="$rss" \
		'BEGIN { printf "%-32s %9d %8.3f %10.3f %8.1f\n", name, n, cpu, (n > 0 ? cpu / n * 1e6 : 0), rss }'
}

# filter BACKEND POLICY: the filters section of the config.
filter() {
	case $1 in
	lua_script) printf '  filters:\n    - name: policy\n      backend: lua_script\n      file: %s\n      call: cb\n' "$root/conformance/baselines/lua/$2.lua" ;;
	*) printf '  filters:\n    - name: policy\n      backend: %s\n      file: %s\n' "$1" "$root/conformance/policies/$2.policy" ;;
	esac
}

printf '\n%-32s %9s %8s %10s %8s\n' "run (median of $runs)" records "CPU s" "CPU s/M" "RSS MiB"
run none/flat flat
run none/k8s k8s
for p in 1-noop 2-drop-all 3-edit 4-read5-edit 5-k8s-edit 6-k8s-lift 7-policy-then-chain 8-chain-then-policy 9-output-side; do
	case $p in 5-* | 6-*) log=k8s ;; *) log=flat ;; esac
	for b in $backends; do
		run "$p/$b" "$log" "$(filter "$b" "$p")"
	done
done
