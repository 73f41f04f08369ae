package deploy

// The manifests as kustomize builds them, read for the tests: the
// kustomization and its workloads, the pods that run policyrun
// (kubemanifests_test.go checks them, kubepods_test.go runs them).

import (
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/pipeline/config"
)

const kubeDir = "kubernetes"

// Where the kubelet keeps container logs (pipeline/kubernetes.go): the
// files of containersDir link to files under podsDir.
const (
	containersDir = "/var/log/containers"
	podsDir       = "/var/log/pods"
)

// The kustomization, decoded strictly (kubeobjects_test.go has the
// objects it makes).
type kustomization struct {
	APIVersion         string   `yaml:"apiVersion"`
	Kind               string   `yaml:"kind"`
	Namespace          string   `yaml:"namespace"`
	Resources          []string `yaml:"resources"`
	ConfigMapGenerator []struct {
		Name  string   `yaml:"name"`
		Files []string `yaml:"files"`
	} `yaml:"configMapGenerator"`
	Images []struct {
		Name    string `yaml:"name"`
		NewName string `yaml:"newName"`
		NewTag  string `yaml:"newTag"`
	} `yaml:"images"`
}

// A workload is a pod template of the manifests that runs policyrun on
// a config from a generated ConfigMap: the node agent's, the gateway's.
type workload struct {
	kind, name string
	meta       objectMeta // the template's
	pod        podSpec
	c          container         // policyrun's, the pod's only one
	configMap  string            // the generator's name
	generated  map[string]string // the ConfigMap's keys: their files in the repository
	configPath string            // the config, where the pod has it
	cfgFile    string            // that config in the repository
	cfg        *config.Config
}

// kube is the manifests, read as kustomize would build them.
type kube struct {
	k       kustomization
	objects []object
	ns      namespace
	sa      serviceAccount
	ds      daemonSet
	gw      deployment
	svc     service
	pdb     podDisruptionBudget
	np      networkPolicy
	agent   *workload
	gateway *workload
}

func readKube(t *testing.T) *kube {
	t.Helper()
	var kb kube
	var resources []resource
	kb.k, resources = readResources(t)
	for _, r := range resources {
		res, objs := r.name, r.objs
		if r.err != nil {
			t.Fatalf("%s: %v", res, r.err)
		}
		for i, v := range r.vals {
			if slices.ContainsFunc(kb.objects, func(o object) bool { return o.Kind == objs[i].Kind }) {
				t.Fatalf("%s: a second %s, which the tests do not tell apart", res, objs[i].Kind)
			}
			keep := kinds[objs[i].Kind].keep
			if keep == nil {
				t.Fatalf("%s: a %s, which the tests do not check: add it", res, objs[i].Kind)
			}
			keep(&kb, v)
			kb.objects = append(kb.objects, objs[i])
		}
	}
	for _, want := range slices.Sorted(maps.Keys(kinds)) {
		if kinds[want].keep != nil && !slices.ContainsFunc(kb.objects, func(o object) bool { return o.Kind == want }) {
			t.Fatalf("the kustomization has no %s", want)
		}
	}
	kb.agent = kb.workload(t, "DaemonSet", kb.ds.Metadata.Name, kb.ds.Spec.Template)
	kb.gateway = kb.workload(t, "Deployment", kb.gw.Metadata.Name, kb.gw.Spec.Template)
	return &kb
}

func (kb *kube) workload(t *testing.T, kind, name string, tmpl podTemplate) *workload {
	t.Helper()
	w := &workload{kind: kind, name: name, meta: tmpl.Metadata, pod: tmpl.Spec, generated: map[string]string{}}
	if n := len(w.pod.Containers); n != 1 {
		t.Fatalf("%s %s has %d containers, want policyrun alone", kind, name, n)
	}
	w.c = w.pod.Containers[0]
	for _, v := range w.pod.Volumes {
		if v.ConfigMap != nil {
			w.configMap = v.ConfigMap.Name
		}
	}
	w.configPath = configArg(t, w.c.Args)
	for _, g := range kb.k.ConfigMapGenerator {
		if g.Name != w.configMap {
			continue
		}
		for _, f := range g.Files {
			// A file's key is its name, or what is before "=".
			key, file, ok := strings.Cut(f, "=")
			if !ok {
				key, file = filepath.Base(f), f
			}
			w.generated[key] = filepath.Join(kubeDir, file)
		}
	}
	if len(w.generated) == 0 {
		t.Fatalf("no configMapGenerator of the kustomization makes %s %s's ConfigMap %q", kind, name, w.configMap)
	}
	w.cfgFile = w.generated[filepath.Base(w.configPath)]
	if w.cfgFile == "" {
		t.Fatalf("%s %s runs %s, which its ConfigMap %s does not hold (it holds %v)", kind, name, w.configPath, w.configMap, w.generated)
	}
	w.cfg = loadConfig(t, w.cfgFile, w.configPath)
	return w
}

// mountOf is the container's volume mount that holds path ("" when none).
func (w *workload) mountOf(path string) volumeMount {
	var best volumeMount
	for _, m := range w.c.VolumeMounts {
		if (path == m.MountPath || strings.HasPrefix(path, m.MountPath+"/")) && len(m.MountPath) > len(best.MountPath) {
			best = m
		}
	}
	return best
}

// volume is the pod's volume name (nil when none).
func (w *workload) volume(name string) *volume {
	for i, v := range w.pod.Volumes {
		if v.Name == name {
			return &w.pod.Volumes[i]
		}
	}
	return nil
}

func (w *workload) hostPath(name string) bool {
	v := w.volume(name)
	return v != nil && v.HostPath != nil
}

// port is the container's port p: a number, or the name of one of its
// ports (-1 when none).
func (w *workload) port(p intOrString) int {
	if !p.IsStr {
		return p.IntVal
	}
	for _, cp := range w.c.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort
		}
	}
	return -1
}

// listenPort is the port of a listen address of the config, which must
// be on every interface to be reached from outside the pod.
func (w *workload) listenPort(t *testing.T, what, addr string) int {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("%s: %s %q: %v", w.cfgFile, what, addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
		t.Errorf("%s: %s listens on %s: the kubelet and the Service reach the pod's address, which only an unspecified address (0.0.0.0, [::]) takes", w.cfgFile, what, host)
	}
	n, _ := strconv.Atoi(port)
	return n
}

// metricsPort is the port of the config's metrics listener, which the
// probes and the scrape must reach.
func (w *workload) metricsPort(t *testing.T) int {
	t.Helper()
	return w.listenPort(t, "service.metrics", w.cfg.Service.Metrics)
}

// runsAsRoot: the container's user, or else the pod's, is 0.
func (w *workload) runsAsRoot() bool {
	u := w.c.SecurityContext.RunAsUser
	if u == nil {
		u = w.pod.SecurityContext.RunAsUser
	}
	return u != nil && *u == 0
}

// grace is w's pod's termination grace period.
func (w *workload) grace() time.Duration {
	return time.Duration(*w.pod.TerminationGracePeriodSeconds) * time.Second
}

// TestKubernetesKustomize builds the kustomization with kubectl, when it
// is installed, and checks what the other tests assume of the build: the
// workloads' image is the one the kustomization sets, each ConfigMap they
// mount is its generator's (under its hashed name) holding the files as
// they are, and every object is in the kustomization's namespace.
func TestKubernetesKustomize(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not installed: the kustomization is checked by its parts only")
	}
	kb := readKube(t)
	out, err := exec.Command("kubectl", "kustomize", kubeDir).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", kubeDir, err)
	}
	objs, vals, err := decodeObjects(out)
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", kubeDir, err)
	}
	if len(objs) != len(kb.objects)+len(kb.k.ConfigMapGenerator) {
		t.Errorf("kubectl kustomize made %d objects, want the %d resources and %d ConfigMaps", len(objs), len(kb.objects), len(kb.k.ConfigMapGenerator))
	}
	pods := map[*workload]podSpec{}
	configMaps := map[string]map[string]string{}
	for i, o := range objs {
		if o.Kind != "Namespace" && o.Metadata.Namespace != kb.k.Namespace {
			t.Errorf("%s %s is in namespace %q, not %q", o.Kind, o.Metadata.Name, o.Metadata.Namespace, kb.k.Namespace)
		}
		switch v := vals[i].(type) {
		case *daemonSet:
			pods[kb.agent] = v.Spec.Template.Spec
		case *deployment:
			pods[kb.gateway] = v.Spec.Template.Spec
		case *configMap:
			configMaps[o.Metadata.Name] = v.Data
		}
	}
	for _, w := range []*workload{kb.agent, kb.gateway} {
		pod, ok := pods[w]
		if !ok {
			t.Fatalf("kubectl kustomize made no %s", w.kind)
		}
		for _, im := range kb.k.Images {
			if pod.Containers[0].Image != im.NewName+":"+im.NewTag {
				t.Errorf("the built %s runs %s, the kustomization sets %s:%s", w.kind, pod.Containers[0].Image, im.NewName, im.NewTag)
			}
		}
		mounted := false
		for _, v := range pod.Volumes {
			if v.ConfigMap == nil {
				continue
			}
			mounted = true
			data, ok := configMaps[v.ConfigMap.Name]
			if !ok || !strings.HasPrefix(v.ConfigMap.Name, w.configMap+"-") {
				t.Fatalf("the built %s mounts ConfigMap %s, which is not its generator's %s (the build makes %v)", w.kind, v.ConfigMap.Name, w.configMap, slices.Collect(maps.Keys(configMaps)))
			}
			if len(data) != len(w.generated) {
				t.Errorf("the built ConfigMap %s holds %d files, the generator %d", v.ConfigMap.Name, len(data), len(w.generated))
			}
			for name, file := range w.generated {
				b, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if data[name] != string(b) {
					t.Errorf("the built ConfigMap %s's %s is not %s", v.ConfigMap.Name, name, file)
				}
			}
		}
		if !mounted {
			t.Errorf("the built %s mounts no ConfigMap", w.kind)
		}
	}
}
