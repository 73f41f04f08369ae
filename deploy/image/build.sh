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
set -euo pipefail
cd "$(dirname "$0")/../.."

image=${IMAGE:-ghcr.io/policyrun/policyrun:dev}
engine=${ENGINE:-}
if [ -z "$engine" ]; then
  for e in podman docker; do
    if command -v "$e" >/dev/null 2>&1; then engine=$e; break; fi
  done
fi
[ -n "$engine" ] || { echo "build.sh: neither podman nor docker is installed (set ENGINE)" >&2; exit 2; }

revision=$(git rev-parse HEAD)
# The commit's time in UTC, as Go's own VCS stamp (vcs.time) has it.
revision_time=$(TZ=UTC0 git show -s --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd HEAD)
modified=false
[ -z "$(git status --porcelain)" ] || modified=true

exec "$engine" build -f Containerfile -t "$image" \
  --build-arg VERSION="${VERSION:-}" \
  --build-arg REVISION="$revision" \
  --build-arg REVISION_TIME="$revision_time" \
  --build-arg REVISION_MODIFIED="$modified" \
  "$@" .
