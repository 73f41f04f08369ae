package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// versionMain is `policyrun version` (and `policyrun --version`): what the
// build info says — the module version ("(devel)" for a build from a
// checkout), the VCS revision and its time, whether the tree had changes,
// and the Go version.
func versionMain(c *call) int {
	if len(c.args) > 0 {
		fmt.Fprintln(c.stderr, "usage: policyrun version")
		return 2
	}
	fmt.Fprint(c.stdout, versionText())
	return 0
}

// What the linker may set, for a build that has no VCS information of
// its own: one with -buildvcs=false, or from a tree without its .git, as
// the container image is built (Containerfile, docs/deploy.md):
//
//	go build -ldflags "-X main.buildRevision=$(git rev-parse HEAD) …" ./cmd/policyrun
//
// The build info's own values win: they describe the tree that was built,
// these only what the builder said, and are read only when the build info
// has no revision. buildVersion replaces only the "(devel)" of a build
// from a checkout (a release is built with -X main.buildVersion=v1.2.3);
// buildModified is "true" for a tree with uncommitted changes.
var buildVersion, buildRevision, buildTime, buildModified string

func versionText() string {
	version, revision, when, modified := "unknown", "", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if buildVersion != "" && (version == "(devel)" || version == "" || version == "unknown") {
		version = buildVersion
	}
	if revision == "" && buildRevision != "" {
		revision, when, modified = buildRevision, buildTime, buildModified == "true"
	}
	out := "policyrun " + version + "\n"
	if revision != "" {
		if modified {
			revision += " (with uncommitted changes)"
		}
		out += "revision " + revision + "\n"
	}
	if when != "" {
		out += "time " + when + "\n"
	}
	return out + fmt.Sprintf("go %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
