package pipeline

import (
	"path/filepath"
	"strings"

	"github.com/policyrun/policyrun/pipeline/tail"
	"github.com/policyrun/policyrun/record"
)

// Kubernetes metadata from a container log's path (kubernetes_path), as
// the Collector's container parser and Fluent Bit's kubernetes filter read
// it, without asking the API server: the kubelet names the files
//
//	/var/log/containers/<pod>_<namespace>_<container>-<container id>.log
//	/var/log/pods/<namespace>_<pod>_<pod uid>/<container>/<restart>.log
//
// and the first is a link to the second.

// The keys set under .kubernetes, in this order.
var kubePaths = [...]record.Path{
	record.NewPath("kubernetes", "pod_name"),
	record.NewPath("kubernetes", "namespace_name"),
	record.NewPath("kubernetes", "container_name"),
	record.NewPath("kubernetes", "container_id"),
	record.NewPath("kubernetes", "pod_id"),
}

// kubeMeta is the values of kubePaths for one file; "" for what its path
// does not say.
type kubeMeta [len(kubePaths)]string

// kubernetesFromPath reads the metadata of a container log file: from its
// name under containers/, and from the pods/ path it links to (resolved
// is the path with its links followed, or "").
func kubernetesFromPath(path, resolved string) (kubeMeta, bool) {
	var m kubeMeta
	ok := false
	if name, found := strings.CutSuffix(filepath.Base(path), ".log"); found {
		// <pod>_<namespace>_<container>-<64 hex>
		parts := strings.SplitN(name, "_", 3)
		if i := strings.LastIndexByte(name, '-'); len(parts) == 3 && i > 0 && isHexID(name[i+1:]) {
			if j := strings.LastIndexByte(parts[2], '-'); j > 0 {
				m[0], m[1], m[2], m[3] = parts[0], parts[1], parts[2][:j], parts[2][j+1:]
				ok = true
			}
		}
	}
	for _, p := range []string{path, resolved} {
		// .../<namespace>_<pod>_<uid>/<container>/<n>.log
		container := filepath.Dir(p)
		podDir := filepath.Base(filepath.Dir(container))
		parts := strings.SplitN(podDir, "_", 3)
		if p == "" || len(parts) != 3 || filepath.Base(filepath.Dir(filepath.Dir(container))) != "pods" {
			continue
		}
		set := func(i int, v string) {
			if m[i] == "" {
				m[i] = v
			}
		}
		set(1, parts[0])
		set(0, parts[1])
		set(4, parts[2])
		set(2, filepath.Base(container))
		ok = true
	}
	return m, ok
}

func isHexID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// kubeCache is an input's cache of files' metadata, nil when it reads
// none.
func kubeCache(on bool) map[*tail.File]kubeMeta {
	if !on {
		return nil
	}
	return map[*tail.File]kubeMeta{}
}

// kubeCached is how many files' metadata an input keeps: files come and
// go with their pods, and a File is new each time its file is opened.
const kubeCached = 4096

// addKubernetes sets the metadata of f's path on r, under .kubernetes,
// where the record has no value of its own there. Each file's path is
// read once.
func (in *input) addKubernetes(r *record.Record, f *tail.File) {
	m, seen := in.kube[f]
	if !seen {
		if len(in.kube) >= kubeCached {
			clear(in.kube)
		}
		resolved, _ := filepath.EvalSymlinks(f.Path)
		m, _ = kubernetesFromPath(f.Path, resolved)
		in.kube[f] = m
	}
	for i, v := range m {
		if v != "" {
			r.SetIfAbsent(kubePaths[i], in.arena.NewStringFrom(v))
		}
	}
}
