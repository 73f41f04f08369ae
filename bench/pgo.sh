#!/bin/sh
# Writes cmd/policyrun/default.pgo, the CPU profile that `go build` of
# cmd/policyrun optimises with (profile-guided optimisation: hot calls are
# inlined past the usual budget, hot interface calls devirtualised), from
# the workloads the benchmarks answer to (docs/bench.md, "The PGO profile"):
#
#   - B1: tail -> each of the nine policies of conformance/policies (the VM)
#     -> null, over `policyrun gen`'s flat lines and k8s records;
#   - B5: an OTLP/HTTP gateway, otlp in -> a policy adding an attribute ->
#     otlp out (protobuf, gzip) to a second policyrun that counts, loaded by
#     `policyrun bench otlp`; and the same ingest with JSON requests into a
#     filesystem-buffered null output.
#
# Each run writes a profile (`policyrun run --cpuprofile`); they are merged
# with `go tool pprof -proto`. The binary that profiles is built without a
# profile, so that the profile does not feed on itself.
#
# Usage: bench/pgo.sh [WORK_DIR]   (default: $TMPDIR/policyrun-pgo)
# FLAT, K8S and OTLP (the record counts) can be overridden.
set -eu

cd "$(dirname "$0")/.."
root=$(pwd)
work=${1:-${TMPDIR:-/tmp}/policyrun-pgo}
flat=${FLAT:-3000000}
k8s=${K8S:-900000}
otlp=${OTLP:-1000000}
rm -rf "$work"
mkdir -p "$work/prof"
bin=$work/policyrun
go build -pgo=off -o "$bin" ./cmd/policyrun

"$bin" gen flat --count "$flat" --seed 1 -o "$work/flat.log"
"$bin" gen k8s --count "$k8s" --seed 1 -o "$work/k8s.log"

for p in conformance/policies/*.policy; do
	name=$(basename "$p" .policy)
	case $name in 5-* | 6-*) log=k8s ;; *) log=flat ;; esac
	cat >"$work/$name.yaml" <<EOF
pipeline:
  inputs:
    - name: tail
      path: $work/$log.log
      parser: json
      read_from_head: true
      exit_on_eof: true
      poll_interval: 50ms
  filters:
    - name: policy
      backend: vm
      file: $root/$p
  outputs:
    - name: null
EOF
	"$bin" run --quiet --cpuprofile "$work/prof/b1-$name.prof" "$work/$name.yaml" >/dev/null
	echo "profiled B1 $name"
done

# serve NAME CONFIG: starts a policyrun server on CONFIG, profiling it.
pids=
trap 'for p in $pids; do kill "$p" 2>/dev/null || true; done' EXIT
serve() {
	"$bin" run --quiet --cpuprofile "$work/prof/$1.prof" "$2" 2>"$work/$1.log" &
	pids="$pids $!"
	last=$!
}
stop() {
	kill -TERM "$1"
	wait "$1" || true
}

cat >"$work/add.policy" <<'EOF'
policy "pgo-add"
schema otlp { attributes: { ... } }
set .attributes."bench.added" = "yes"
EOF
cat >"$work/receiver.yaml" <<EOF
pipeline:
  inputs:
    - name: otlp
      listen: 127.0.0.1:24510
  outputs:
    - name: null
      encode: false
EOF
cat >"$work/gateway.yaml" <<EOF
pipeline:
  inputs:
    - name: otlp
      listen: 127.0.0.1:24511
  filters:
    - name: policy
      file: $work/add.policy
  outputs:
    - name: otlp
      endpoint: http://127.0.0.1:24510
      compression: gzip
EOF
cat >"$work/ingest-json.yaml" <<EOF
service:
  data_dir: $work/data
pipeline:
  inputs:
    - name: otlp
      listen: 127.0.0.1:24512
  filters:
    - name: policy
      file: $work/add.policy
  outputs:
    - name: null
      buffer:
        type: filesystem
EOF
serve receiver "$work/receiver.yaml"
receiver=$last
serve gateway "$work/gateway.yaml"
gateway=$last
"$bin" bench otlp --url http://127.0.0.1:24511/v1/logs --wait 10s --records "$otlp" --encoding protobuf >/dev/null
stop "$gateway"
stop "$receiver"
echo "profiled B5 gateway"
serve ingest-json "$work/ingest-json.yaml"
"$bin" bench otlp --url http://127.0.0.1:24512/v1/logs --wait 10s --records "$otlp" --encoding json >/dev/null
stop "$last"
echo "profiled B5 JSON ingest"

go tool pprof -proto "$work"/prof/*.prof >cmd/policyrun/default.pgo
echo "wrote cmd/policyrun/default.pgo ($(wc -c <cmd/policyrun/default.pgo) bytes) from $(ls "$work"/prof | wc -l) profiles"
