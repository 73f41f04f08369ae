#!/bin/sh
# Runs the OTLP gateway of pipeline.yaml end to end on this machine: a
# receiver (receiver.yaml, printing what arrives), the gateway, and
# `policyrun bench otlp` as the sender (1,000 generated records). Prints
# the first records the receiver got and both run summaries.
#
# The configs run from a temporary copy, so the gateway's buffer (data/)
# is not left in the repository.
#
# Usage: examples/otlp/gateway.sh [RECORDS]
# (POLICYRUN names a policyrun binary to use instead of building one.)
set -eu
cd "$(dirname "$0")"
records=${1:-1000}
tmp=$(mktemp -d)
recv= gw=
trap 'kill $recv $gw 2>/dev/null || true; rm -rf "$tmp"' EXIT
bin=${POLICYRUN:-$tmp/policyrun}
[ -n "${POLICYRUN:-}" ] || go build -o "$bin" ../../cmd/policyrun
cp pipeline.yaml receiver.yaml otlp.policy "$tmp/"

"$bin" run "$tmp/receiver.yaml" >"$tmp/received.jsonl" 2>"$tmp/receiver.log" &
recv=$!
"$bin" run "$tmp/pipeline.yaml" 2>"$tmp/gateway.log" &
gw=$!
"$bin" bench otlp --url http://127.0.0.1:4319/v1/logs --records 0 --wait 10s
"$bin" bench otlp --url http://127.0.0.1:4318/v1/logs --wait 10s --records "$records" --warmup 0 --clients 4
kill -TERM $gw
wait $gw || true
kill -TERM $recv
wait $recv || true

echo
echo "== the first records the receiver got (of $(wc -l <"$tmp/received.jsonl"); the policy dropped the debug ones) =="
head -n 2 "$tmp/received.jsonl"
echo
echo "== gateway =="
cat "$tmp/gateway.log"
echo
echo "== receiver =="
cat "$tmp/receiver.log"
