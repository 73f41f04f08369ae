#!/usr/bin/env bash
# Builds the policyrun image (Containerfile) from this checkout, passing
# what `policyrun version` is to print: the commit, its time and whether
# the tree has uncommitted changes, read from git, since the build context
# has no .git (docs/deploy.md, "The image").
#
#   deploy/image/build.sh [ENGINE BUILD ARGUMENTS…]
#
# IMAGE names the image (ghcr.io/policyrun/policyrun:dev); ENGINE is
# podman or docker (the first found); VERSION, when set, replaces the
# "(devel)" of a build from a checkout (a release's v1.2.3). Further
# arguments go to the engine's build: --platform linux/arm64,
# --build-arg GO_IMAGE=… for another builder image.
#
# PREBUILT=1 builds on a machine that reaches no registry, for its own
# platform: the Containerfile's build command (the RUN of its stage
# `build` that runs go build) runs here, with this machine's Go, and
# what the image's stage copies from that stage is given to the engine
# as that stage (--build-context build=DIR): the binary the command
# makes, and this machine's files for the rest (its CA certificates).
# The image's stage is the Containerfile's, unchanged.
set -euo pipefail
cd "$(dirname "$0")/../.."

. deploy/image/engine.sh

revision=$(git rev-parse HEAD)
# The commit's time in UTC, as Go's own VCS stamp (vcs.time) has it.
revision_time=$(TZ=UTC0 git show -s --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd HEAD)
modified=false
[ -z "$(git status --porcelain)" ] || modified=true

contexts=()
# The Containerfile's stage that builds the binary (deploy's
# TestContainerfile checks the name).
build_stage=build
if [ "${PREBUILT:-}" = 1 ]; then
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
  # The Containerfile's instructions, one a line (continuations joined).
  instructions=$(sed -e '/^[[:space:]]*#/d' Containerfile | sed -e ':a' -e '/\\$/{N;s/\\\n[[:space:]]*/ /;ba}')
  run=$(grep -E '^RUN .*go build' <<<"$instructions" | sed 's/^RUN //')
  out=$(grep -oE -- '-o [^ ]+' <<<"$run" | cut -c4-)
  [ "$(grep -c . <<<"$run")" = 1 ] && [ -n "$out" ] || { echo "build.sh: no one RUN of the Containerfile runs go build -o FILE" >&2; exit 2; }
  # As the stage runs it: its ARGs from the environment, no GOFLAGS (the
  # Go image sets none), the output under the stand-in's directory.
  mkdir -p "$stage$(dirname "$out")"
  (export VERSION="${VERSION:-}" REVISION="$revision" REVISION_TIME="$revision_time" REVISION_MODIFIED="$modified" \
     TARGETOS=linux TARGETARCH="$(go env GOARCH)" GOFLAGS=
   sh -c "${run//" $out"/" $stage$out"}")
  for src in $(grep -E "^COPY --from=$build_stage " <<<"$instructions" | awk '{for (i = 3; i < NF; i++) print $i}'); do
    [ "$src" = "$out" ] && continue
    install -D -m 0644 "$src" "$stage$src"
  done
  contexts=(--build-context "$build_stage=$stage")
fi

"$engine" build -f Containerfile -t "$image" \
  --build-arg VERSION="${VERSION:-}" \
  --build-arg REVISION="$revision" \
  --build-arg REVISION_TIME="$revision_time" \
  --build-arg REVISION_MODIFIED="$modified" \
  "${contexts[@]}" "$@" .
