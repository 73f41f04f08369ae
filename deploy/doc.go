// Package deploy holds what runs policyrun as a log agent, and its tests:
// the container image's default pipeline (image/, built by the
// Containerfile at the repository's root), the Kubernetes manifests of a
// node agent (kubernetes/) and a systemd unit (systemd/). The tests hold
// them to the code: the configs pass `policyrun run --check`, the
// manifests mount every path their config reads or writes and probe the
// port it serves, the image's build command makes a static binary that
// says its revision, and a stop fits in the time the unit and the pod
// give it. docs/deploy.md is the operator's guide.
package deploy
