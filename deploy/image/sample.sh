#!/usr/bin/env bash
# Builds the image without a registry (build.sh with PREBUILT=1) and runs
# the README's sample job in it ("Quick start": `go run ./cmd/policyrun
# run CONFIG`, read from the README): CONFIG's directory, the sample data
# and policy beside it, is mounted read-only, the image runs as its own
# user on a read-only root, and its output must be what the README's
# command prints here: the same JSON lines, the same counts. .ci/run runs
# this where podman is installed (docs/deploy.md, "CI").
#
# Exit status 0 also when the engine does not work on this machine (no
# storage, no runtime that can start a container): it says why, and
# that it skipped. A failed build or a wrong output is a failure.
#
# ENGINE (podman) and IMAGE (localhost/policyrun:sample) as for build.sh.
# RUN_FLAGS go to every `run`; unset, the engine's defaults are tried,
# then runc without the rlimits Podman sets by default (docs/deploy.md).
set -euo pipefail
cd "$(dirname "$0")/../.."

engine=${ENGINE:-podman}
image=${IMAGE:-localhost/policyrun:sample}
skip() { echo "sample.sh: SKIP: $*" >&2; exit 0; }
fail() { echo "sample.sh: FAIL: $*" >&2; exit 1; }

command -v "$engine" >/dev/null 2>&1 || skip "$engine is not installed"
why=$("$engine" info 2>&1 >/dev/null) || skip "$engine info failed: $why"

start=$SECONDS
# No intermediate images (Podman's --layers): each commit's binary would
# leave a layer of it behind, run after run.
build_flags=(--quiet)
[ "$(basename "$engine")" != podman ] || build_flags+=(--layers=false)
PREBUILT=1 IMAGE=$image ENGINE=$engine deploy/image/build.sh "${build_flags[@]}" >/dev/null ||
  fail "PREBUILT=1 deploy/image/build.sh could not build $image"
trap '"$engine" rmi -f "$image" >/dev/null 2>&1 || true' EXIT

# The probe: a container of the image that runs and says its version.
if [ -n "${RUN_FLAGS+set}" ]; then
  candidates=("$RUN_FLAGS")
else
  candidates=("" "--runtime runc --ulimit nofile=20000:20000 --ulimit nproc=32768:32768")
fi
run_flags=() works=false errors=""
for c in "${candidates[@]}"; do
  read -r -a run_flags <<<"$c"
  if out=$("$engine" run --rm "${run_flags[@]}" "$image" version 2>&1); then
    works=true
    break
  fi
  errors+=$'\n'"  with flags '$c': $out"
done
$works || skip "no container of $image could run:$errors"
grep -q "^revision $(git rev-parse HEAD)" <<<"$out" || fail "the image's policyrun version does not say this checkout's revision: $out"

# The README's sample job.
config=$(grep -oE '^go run \./cmd/policyrun run [^ ]+$' README.md | head -1 | awk '{print $NF}')
[ -n "$config" ] && [ -f "$config" ] || fail "the README has no sample job (go run ./cmd/policyrun run CONFIG)"
dir=$(dirname "$config")
work=$(mktemp -d)
trap 'rm -rf "$work"; "$engine" rmi -f "$image" >/dev/null 2>&1 || true' EXIT
go run ./cmd/policyrun run "$config" >"$work/want.out" 2>"$work/want.err"
"$engine" run --rm --read-only "${run_flags[@]}" -v "$PWD/$dir:/sample:ro" "$image" \
  run "/sample/$(basename "$config")" >"$work/got.out" 2>"$work/got.err" ||
  { cat "$work/got.err" >&2; fail "the sample job failed in the image"; }
cmp -s "$work/want.out" "$work/got.out" ||
  { diff "$work/want.out" "$work/got.out" | head -5 >&2; fail "the image's output differs from the README's command's"; }
counts() { grep -E '^(records|input|filter|output|bytes):? ' "$1"; }
[ "$(counts "$work/want.err")" = "$(counts "$work/got.err")" ] && [ -n "$(counts "$work/got.err")" ] ||
  { diff <(counts "$work/want.err") <(counts "$work/got.err") >&2; fail "the image's run summary differs from the README's command's"; }
echo "sample.sh: ok: $config in $image ($engine ${run_flags[*]}): $(wc -l <"$work/got.out") records out, as the README's command; $((SECONDS - start)) s"
head -1 "$work/got.err"
