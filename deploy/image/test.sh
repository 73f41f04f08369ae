#!/usr/bin/env bash
# Builds the image (build.sh) and runs it as deployments do
# (docs/deploy.md, "The image"):
#
#  1. `policyrun version` says this checkout's revision, and the platform
#     the image is labelled with;
#  2. the node agent's config (deploy/kubernetes) runs as the DaemonSet
#     runs it: root with every capability dropped, a read-only root, the
#     kubelet's log directories mounted read-only and the state directory
#     writable. A CRI line, and a Java stack trace as one record
#     (multiline), written to a container's log reach
#  3. the image's default pipeline (OTLP/HTTP in, JSON lines out), run
#     as the image's non-root user on a read-only root, with its pod's
#     names; `policyrun bench otlp` in a third container sends it 1,000
#     records more. Both stop on SIGTERM with exit status 0.
#
# ENGINE, IMAGE and PREBUILT (a build without a registry) as for build.sh. BUILD_FLAGS go to build.sh, RUN_FLAGS
# to every `run` (a machine whose runtime cannot set rlimits or use its
# cgroups needs some: docs/deploy.md). SKIP_BUILD=1 tests IMAGE as it is.
set -euo pipefail
cd "$(dirname "$0")/../.."

. deploy/image/engine.sh
read -r -a run_flags <<<"${RUN_FLAGS:-}"
read -r -a build_flags <<<"${BUILD_FLAGS:-}"

fail() { echo "test.sh: FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
receiver="" agent=""
cleanup() {
  for c in $agent $receiver; do "$engine" rm -f "$c" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

if [ "${SKIP_BUILD:-}" != 1 ]; then
  IMAGE=$image ENGINE=$engine deploy/image/build.sh "${build_flags[@]}"
fi

# 1. The version the build was given: the revision of the image's label
# (this checkout's, when this script built it), and the platform the
# image says it is for.
revision=$("$engine" image inspect "$image" --format '{{index .Labels "org.opencontainers.image.revision"}}')
if [ "${SKIP_BUILD:-}" != 1 ] && [ "$revision" != "$(git rev-parse HEAD)" ]; then
  fail "the image is labelled revision '$revision', not this checkout's"
fi
version=$("$engine" run --rm "${run_flags[@]}" "$image" version)
echo "$version"
grep -q "^revision $revision" <<<"$version" || fail "policyrun version does not say revision $revision"
platform=$("$engine" image inspect "$image" --format '{{.Os}}/{{.Architecture}}')
grep -q "^go .* $platform\$" <<<"$version" || fail "the image says it is for $platform, its binary: $(tail -1 <<<"$version")"

# logs CONTAINER: its output, whole (grep -q on a pipe would end the
# engine's write early, which pipefail counts as a failure).
logs() { "$engine" logs "$1" 2>&1; }
# waitlog CONTAINER PATTERN: wait up to 30 s for PATTERN in its output.
waitlog() {
  for _ in $(seq 300); do
    if grep -q -- "$2" <<<"$(logs "$1")"; then return 0; fi
    sleep 0.1
  done
  logs "$1" >&2 || true
  fail "$1 never said $2"
}
# stop CONTAINER: SIGTERM, then its exit status must be 0.
stop() {
  "$engine" stop -t 30 "$1" >/dev/null
  code=$("$engine" inspect "$1" --format '{{.State.ExitCode}}')
  [ "$code" = 0 ] || { logs "$1" >&2; fail "$1 exited $code after SIGTERM"; }
}

# 3. The default pipeline, as built: its user, a read-only root.
receiver=$("$engine" run -d --read-only "${run_flags[@]}" "$image")
waitlog "$receiver" "metrics at http://"
user=$("$engine" inspect "$receiver" --format '{{.Config.User}}')
[ "$user" != "" ] && [ "${user%%:*}" != 0 ] || fail "the default pipeline runs as user '$user'"

# 2. The node agent, in the receiver's network namespace: its metrics
# moved off the receiver's port, its endpoint the receiver.
mkdir -p "$work/config" "$work/containers" "$work/pods" "$work/state"
cp deploy/kubernetes/node-agent.policy "$work/config/"
sed -e 's#^\(  metrics:\) .*#\1 127.0.0.1:2022#' \
    -e 's#^\(      endpoint:\) .*#\1 http://127.0.0.1:4318#' \
    deploy/kubernetes/pipeline.yaml >"$work/config/pipeline.yaml"
id=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
pod_dir=shop_checkout-7d9f_9a3c1e52-0d7e-4d6b-8d0f-2f1f3b9e6c11/app
mkdir -p "$work/pods/$pod_dir"
install -m 0640 /dev/null "$work/pods/$pod_dir/0.log"
ln -s "/var/log/pods/$pod_dir/0.log" "$work/containers/checkout-7d9f_shop_app-$id.log"
agent=$("$engine" run -d --network "container:$receiver" \
  --user 0:0 --cap-drop ALL --security-opt no-new-privileges --read-only \
  -v "$work/config:/etc/policyrun:ro" \
  -v "$work/containers:/var/log/containers:ro" \
  -v "$work/pods:/var/log/pods:ro" \
  -v "$work/state:/var/lib/policyrun" \
  "${run_flags[@]}" "$image" run /etc/policyrun/pipeline.yaml)
waitlog "$agent" "metrics at http://"
# The line after the trace ends it, as a program that goes on logging
# would.
printf '2026-12-01T10:00:00.000000000Z stdout F %s\n' "order 1234 paid" \
  "java.lang.IllegalStateException: payment declined" \
  $'\tat com.example.shop.payment.PaymentService.charge(PaymentService.java:87)' \
  "Caused by: com.example.shop.payment.GatewayException: gateway answered 502" \
  $'\t... 9 more' "order 1235 paid" >>"$work/pods/$pod_dir/0.log"
waitlog "$receiver" '"order 1235 paid"'
line=$(grep '"order 1234 paid"' <<<"$(logs "$receiver")")
grep -q '"k8s.pod.name":"checkout-7d9f"' <<<"$line" || fail "the line reached the receiver without its pod's name: $line"
trace=$(grep 'payment declined' <<<"$(logs "$receiver")")
[ "$(grep -c . <<<"$trace")" = 1 ] && grep -q 'payment declined\\n\\tat com.example.*\\nCaused by: .*\\n\\t... 9 more"' <<<"$trace" &&
  grep -q '"k8s.pod.name":"checkout-7d9f"' <<<"$trace" || fail "the stack trace did not reach the receiver as one record with its pod's name: $trace"

"$engine" run --rm --network "container:$receiver" "${run_flags[@]}" "$image" \
  bench otlp --records 1000 --warmup 0 --clients 2 --wait 10s
stop "$agent"
[ -s "$work/state/tail.db" ] || fail "the agent saved no checkpoint in its state directory"
stop "$receiver"
grep -q "^input otlp.0: in 1003," <<<"$(logs "$receiver")" ||
  { logs "$receiver" | tail -8 >&2; fail "the receiver did not take the agent's 3 records and the 1,000"; }
echo "test.sh: ok ($engine, $image)"
