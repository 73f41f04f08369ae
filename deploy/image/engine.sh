# Sourced by build.sh and test.sh, from the checkout's root: the image
# (IMAGE, or the default the kustomization's images entry names) and the
# engine that builds and runs it (ENGINE, or podman or docker: the first
# found).
image=${IMAGE:-ghcr.io/policyrun/policyrun:dev}
engine=${ENGINE:-}
if [ -z "$engine" ]; then
  for e in podman docker; do
    if command -v "$e" >/dev/null 2>&1; then engine=$e; break; fi
  done
fi
[ -n "$engine" ] || { echo "$(basename "$0"): neither podman nor docker is installed (set ENGINE)" >&2; exit 2; }
