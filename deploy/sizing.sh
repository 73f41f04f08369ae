#!/usr/bin/env bash
# Measures what the Kubernetes configs cost, for their resource requests
# and limits (docs/deploy.md, "Sizing"): the node agent's config tails a
# container log into which COUNT lines of `policyrun gen cri` are written,
# and sends to the gateway's config, which sends to a sink (otlp input,
# null output). Each is deploy/kubernetes's file as it is, but for its
# paths and addresses (here, under a temporary directory, on loopback).
# Prints each process's run summary: CPU seconds and peak RSS.
#
#   deploy/sizing.sh            # COUNT lines at once: a backlog, read flat out
#   PACE=1 deploy/sizing.sh     # 5,000 lines every 0.5 s: 10,000 lines/s
#
# BIN is a policyrun binary (built from this checkout by default).
set -euo pipefail
cd "$(dirname "$0")/.."
count=${COUNT:-300000}
R=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$R"' EXIT
bin=${BIN:-}
if [ -z "$bin" ]; then bin=$R/policyrun; CGO_ENABLED=0 go build -trimpath -o "$bin" ./cmd/policyrun; fi
K=deploy/kubernetes
pod=shop_checkout-7d9f_9a3c1e52-0d7e-4d6b-8d0f-2f1f3b9e6c11
mkdir -p "$R/agent" "$R/gw" "$R/sink" "$R/var/log/containers" "$R/var/log/pods/$pod/app"
cp "$K/node-agent.policy" "$R/agent/"
sed -e "s#/var/log#$R/var/log#g" -e "s#/var/lib/policyrun#$R/agent#g" \
    -e 's#^\(  metrics:\) .*#\1 127.0.0.1:12021#' -e 's#^\(      endpoint:\) .*#\1 http://127.0.0.1:14317#' \
    "$K/pipeline.yaml" >"$R/agent/pipeline.yaml"
sed -e "s#/var/lib/policyrun#$R/gw#g" -e 's#^\(  metrics:\) .*#\1 127.0.0.1:12022#' \
    -e 's#^\(      listen:\) .*#\1 127.0.0.1:14317#' -e 's#^\(      endpoint:\) .*#\1 http://127.0.0.1:14318#' \
    "$K/gateway/pipeline.yaml" >"$R/gw/pipeline.yaml"
cat >"$R/sink/pipeline.yaml" <<'Y'
service: {metrics: 127.0.0.1:12023}
pipeline:
  inputs: [{name: otlp, listen: "127.0.0.1:14318"}]
  outputs: [{name: "null", encode: false}]
Y
log=$R/var/log/pods/$pod/app/0.log
: >"$log"
ln -s "$log" "$R/var/log/containers/checkout-7d9f_shop_app-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.log"
"$bin" gen cri --count "$count" -o "$R/data.log"
"$bin" run "$R/sink/pipeline.yaml" 2>"$R/sink.err" & pids+=($!)
"$bin" run "$R/gw/pipeline.yaml" 2>"$R/gw.err" & pids+=($!)
sleep 1
"$bin" run "$R/agent/pipeline.yaml" 2>"$R/agent.err" & pids+=($!)
sleep 2
start=$(date +%s.%N)
if [ -n "${PACE:-}" ]; then
  split -l 5000 "$R/data.log" "$R/part."
  for f in "$R"/part.*; do cat "$f" >>"$log"; sleep 0.5; done
else
  cat "$R/data.log" >>"$log"
fi
# Delivered when the sink's count stops growing (the P parts and any
# trace joined, the records are fewer than the lines).
last=-1
while :; do
  sleep 2
  n=$(curl -s 127.0.0.1:12023/metrics | awk '/^policyrun_records_in_total /{print $2}')
  [ "$n" != "$last" ] || break
  last=$n
done
echo "$count lines, $n records at the sink in $(echo "$(date +%s.%N) - $start - 2" | bc) s"
for i in 2 1 0; do kill -TERM "${pids[$i]}"; wait "${pids[$i]}" || true; done
pids=()
for p in agent gw sink; do echo "== $p"; grep -E '^(records|time)' "$R/$p.err"; done
