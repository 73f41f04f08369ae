#!/bin/sh
# The whole Collector under load (docs/collector.md, "The whole Collector
# under load"): this repository's distribution, otelcol-policyrun, with
# the otlp receiver (HTTP, 127.0.0.1) -> [a processor] -> the nop
# exporter, loaded by `policyrun bench otlp` as bench/otlp.sh loads B5
# (clients on persistent connections, requests of 100 records in B5's
# shape: bench/load.sh). Cases, each in JSON and protobuf: ingest only (no processor: the
# same for both processors, so run once as their baseline) and
# add_attribute, by the policyrun processor (set .attributes."bench.added"
# = "yes") and by the transform processor (set(log.attributes
# ["bench.added"], "yes")).
#
# No batch processor: with none, the pipeline is synchronous (the nop
# exporter has no queue), so a request is answered once its records have
# gone through the exporter, and the CPU that bench otlp reads over the
# measured requests is all of their work. After each run the receiver's
# otelcol_receiver_accepted_log_records (the Collector's own metrics,
# counted once the pipeline took a request) must equal the records sent.
#
# RUNS rounds (bench/load.sh), each running every case once, interleaved so
# that all cases see the same load; the table gives medians of the
# Collector process's CPU seconds per million records (user+sys, over
# the measured records, from /proc), and what the processor adds to
# ingest only.
#
# Usage: bench/collector.sh   (RECORDS, WARMUP, RUNS, CLIENTS from the
# environment; ENCODINGS and CASES restrict the matrix, e.g.
# ENCODINGS=protobuf CASES="ingest policyrun"; COLLECTOR runs an
# otelcol-policyrun built elsewhere instead of building this tree's)
set -eu
cd "$(dirname "$0")/.."
. bench/load.sh
encodings=${ENCODINGS:-json protobuf}
cases=${CASES:-ingest policyrun transform}
if [ -n "${COLLECTOR:-}" ]; then
	collector=$COLLECTOR
else
	(cd otelcol && go build -o "$tmp/otelcol-policyrun" ./cmd/otelcol-policyrun)
	collector=$tmp/otelcol-policyrun
fi
go build -o "$tmp/policyrun" ./cmd/policyrun
printf 'policy "add"\n\nschema otlp\n\nset .attributes."bench.added" = "yes"\n' >"$tmp/add.policy"
metrics=$((port + 1))

# config CASE: writes $tmp/CASE.yaml.
config() {
	{
		printf 'receivers:\n  otlp:\n    protocols:\n      http:\n        endpoint: 127.0.0.1:%d\n' "$port"
		case $1 in
		policyrun) printf 'processors:\n  policyrun:\n    policies: [%s/add.policy]\n' "$tmp" ;;
		transform) printf 'processors:\n  transform:\n    error_mode: ignore\n    log_statements:\n      - %s\n' \
			"'set(log.attributes[\"bench.added\"], \"yes\")'" ;;
		esac
		printf 'exporters:\n  nop: {}\n'
		printf 'service:\n  telemetry:\n    logs: {level: warn}\n'
		printf '    metrics:\n      level: normal\n      readers:\n        - pull: {exporter: {prometheus: {host: 127.0.0.1, port: %d}}}\n' "$metrics"
		printf '  pipelines:\n    logs:\n      receivers: [otlp]\n'
		[ "$1" = ingest ] || printf '      processors: [%s]\n' "$1"
		printf '      exporters: [nop]\n'
	} >"$tmp/$1.yaml"
}

# accepted: the log records the otlp receiver passed on, by the
# Collector's own metrics.
accepted() {
	curl -sf "http://127.0.0.1:$metrics/metrics" |
		awk '/^otelcol_receiver_accepted_log_records[{ ]/ { n += $NF } END { printf "%d\n", n }'
}

for c in $cases; do config "$c"; done
: >"$tmp/results"
for round in $(seq "$runs"); do
	for encoding in $encodings; do
		for c in $cases; do
			"$collector" --config "$tmp/$c.yaml" 2>"$tmp/server.log" &
			server=$!
			load "$tmp/policyrun" "$encoding" 30s >"$tmp/figures"
			got=$(accepted)
			sent=$(awk '{ print $7 }' "$tmp/figures")
			if [ "$got" != "$sent" ]; then
				echo "round $round, $encoding $c: the receiver passed on $got records, want $sent" >&2
				cat "$tmp/server.log" >&2
				exit 1
			fi
			stop
			echo "$encoding $c $(cat "$tmp/figures")" >>"$tmp/results"
			echo "round $round, $encoding $c: $(tail -n 1 "$tmp/results" | cut -d' ' -f3) CPU s / M records" >&2
		done
	done
done

# col ENCODING CASE N: the median of column N of that case's runs.
col() { awk -v e="$1" -v c="$2" -v n="$3" '$1 == e && $2 == c { print $n }' "$tmp/results" | median; }
printf '| encoding | case | processor | Collector CPU s / M records | above ingest only | records/s | RSS steady MiB | p50 ms | p99 ms |\n'
printf '|---|---|---|--:|--:|--:|--:|--:|--:|\n'
for encoding in $encodings; do
	base=
	case " $cases " in *" ingest "*) base=$(col "$encoding" ingest 3) ;; esac
	for c in $cases; do
		cpu=$(col "$encoding" "$c" 3)
		above=—
		if [ "$c" != ingest ] && [ -n "$base" ]; then
			above=$(awk -v a="$cpu" -v b="$base" 'BEGIN { printf "%+.2f", a - b }')
		fi
		name=add_attribute
		proc=$c
		[ "$c" = ingest ] && name="ingest only" && proc=none
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$encoding" "$name" "$proc" "$cpu" "$above" \
			"$(col "$encoding" "$c" 4)" "$(col "$encoding" "$c" 5)" "$(col "$encoding" "$c" 7)" "$(col "$encoding" "$c" 8)"
	done
done
