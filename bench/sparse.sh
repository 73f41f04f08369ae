#!/bin/sh
# B6, sparse filesystem buffering (docs/pipeline.md, "Sparse buffering
# (B6)"): 1,000 files of 64 lines of 256 bytes (255 and a newline), each
# file its own tag, read by one tail input into an otlp output whose
# endpoint is down, with a filesystem buffer; once everything is read, the
# allocated disk (du) of service.data_dir against the 16,384,000 bytes of
# the lines. Fluent Bit 5.2's figure is 19.53 MiB (1.25x). The output has
# logs_body_key: log, so that each line is its LogRecord's body (a string)
# rather than a map {log: line}; BODY_KEY= (empty) measures the map.
#
# Usage: bench/sparse.sh   (FILES, LINES from the environment)
set -eu
cd "$(dirname "$0")/.."
files=${FILES:-1000}
lines=${LINES:-64}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/policyrun" ./cmd/policyrun
mkdir "$tmp/logs"
awk -v files="$files" -v lines="$lines" -v dir="$tmp/logs" 'BEGIN {
	pad = sprintf("%255s", ""); gsub(/ /, "x", pad)
	for (f = 0; f < files; f++) {
		path = sprintf("%s/app-%04d.log", dir, f)
		for (l = 0; l < lines; l++) {
			head = sprintf("%04d %02d ", f, l)
			print head substr(pad, length(head) + 1) > path
		}
		close(path)
	}
}'
bytes=$(cat "$tmp"/logs/*.log | wc -c)
# A port nothing listens on: the endpoint is down for the whole run.
port=$((40000 + $$ % 20000))
cat >"$tmp/p.yaml" <<YAML
service:
  data_dir: $tmp/data
  grace: 1s
pipeline:
  inputs:
    - name: tail
      path: $tmp/logs/*.log
      tag: sparse.*
      read_from_head: true
      exit_on_eof: true
      poll_interval: 50ms
  outputs:
    - name: otlp
      endpoint: http://127.0.0.1:$port
      compression: none
      logs_body_key: ${BODY_KEY-log}
      retry: {initial_interval: 1s, max_interval: 1s}
      buffer: {type: filesystem}
YAML
"$tmp/policyrun" run "$tmp/p.yaml" 2>"$tmp/run.log" || { cat "$tmp/run.log" >&2; exit 1; }
grep -E '^(records|output)' "$tmp/run.log"
du_k=$(du -sk "$tmp/data" | cut -f1)
apparent=$(du -sb --apparent-size "$tmp/data" | cut -f1)
chunks=$(ls "$tmp/data/otlp.0" | grep -c '\.chunk$' || true)
awk -v du="$du_k" -v app="$apparent" -v b="$bytes" -v c="$chunks" 'BEGIN {
	printf "lines: %d bytes; data_dir: %d chunk files, %d bytes apparent (%.3fx), %d KiB allocated = %.2f MiB (%.3fx the lines)\n",
		b, c, app, app / b, du, du / 1024, du * 1024 / b
}'
