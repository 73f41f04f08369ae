#!/bin/sh
# B5, OTLP ingestion (docs/pipeline.md, "OTLP ingestion (B5)"): policyrun
# run with an otlp input -> [a policy] -> a null output, loaded by
# `policyrun bench otlp` (clients on persistent connections, requests of
# 100 records in B5's shape: bench/load.sh) on the same machine. Cases:
# JSON and protobuf; ingest only and "add an attribute" (set
# .attributes."bench.added" = "yes"); memory (null with encode: false: the
# records counted where they are, as Fluent Bit's null and the Collector's
# nop), memory-buffer (null with a memory buffer: each batch encoded as an
# OTLP request, queued, then "delivered" by counting, before its request
# is answered) and filesystem buffering (null with a filesystem buffer:
# each batch encoded as an OTLP request, fsynced into a chunk file, then
# "delivered" by counting).
#
# Each case runs RUNS times (bench/load.sh); the table gives medians of the
# server's CPU seconds per million records (user+sys of the server process
# only, over the measured records, from /proc), records/s, steady and peak
# RSS, and the request p50/p99.
#
# Usage: bench/otlp.sh   (RECORDS, WARMUP, RUNS, CLIENTS from the environment;
# BUFFERS, ENCODINGS and POLICIES restrict the matrix, e.g.
# BUFFERS=memory ENCODINGS=protobuf; BIN runs a binary built elsewhere, such
# as an older commit's, instead of building this tree's)
set -eu
cd "$(dirname "$0")/.."
. bench/load.sh
if [ -n "${BIN:-}" ]; then
	bin=$BIN
else
	go build -o "$tmp/policyrun" ./cmd/policyrun
	bin=$tmp/policyrun
fi
printf 'policy "add"\n\nset .attributes."bench.added" = "yes"\n' >"$tmp/add.policy"

# config POLICY BUFFER: writes $tmp/p.yaml.
config() {
	{
		printf 'service:\n  data_dir: %s/data\npipeline:\n  inputs:\n    - name: otlp\n      listen: 127.0.0.1:%d\n' "$tmp" "$port"
		if [ "$1" = add ]; then
			printf '  filters:\n    - name: policy\n      file: %s/add.policy\n' "$tmp"
		fi
		printf '  outputs:\n    - name: null\n'
		case $2 in
		memory) printf '      encode: false\n' ;;
		memory-buffer) printf '      buffer: {type: memory}\n' ;;
		*) printf '      buffer: {type: filesystem}\n' ;;
		esac
	} >"$tmp/p.yaml"
}

printf '| buffer | encoding | policy | CPU s / M records | records/s | RSS steady MiB | RSS peak MiB | p50 ms | p99 ms |\n'
printf '|---|---|---|--:|--:|--:|--:|--:|--:|\n'
for buffer in ${BUFFERS:-memory memory-buffer filesystem}; do
	for encoding in ${ENCODINGS:-json protobuf}; do
		for policy in ${POLICIES:-ingest add}; do
			config "$policy" "$buffer"
			: >"$tmp/results"
			for _ in $(seq "$runs"); do
				rm -rf "$tmp/data"
				"$bin" run --quiet "$tmp/p.yaml" 2>"$tmp/server.log" &
				server=$!
				load "$bin" "$encoding" 10s >>"$tmp/results"
				stop
			done
			col() { awk -v c="$1" '{ print $c }' "$tmp/results" | median; }
			printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$buffer" "$encoding" "$policy" \
				"$(col 1)" "$(col 2)" "$(col 3)" "$(col 4)" "$(col 5)" "$(col 6)"
		done
	done
done
