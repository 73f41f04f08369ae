#!/bin/sh
# B1, whole process: tail → policy → null over the deterministic data.
#
# Today this does the first step, generating the data with `policyrun gen`
# (BENCHMARKS.md: flat, 1,000,000 JSON lines of about 256 bytes; k8s,
# 300,000 CRI container lines and the same number of records carrying the
# kubernetes map). The runs of `policyrun run` are added with the pipeline.
#
# Usage: bench/pipeline.sh [DATA_DIR]   (default: $TMPDIR/policyrun-bench)
# SEED and the counts FLAT, K8S can be overridden from the environment.
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
