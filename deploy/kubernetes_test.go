package deploy

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testnet"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/pipeline/output"
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

// checkWorkload holds a pod template to its config: what the config
// reads and writes is mounted, the probes and the scrape reach its
// metrics listener, the container has no privilege it does not need,
// the stop has room, and the resources are set. persistent says which
// volumes may hold what the config writes.
func checkWorkload(t *testing.T, kb *kube, w *workload, persistent func(v *volume) bool) {
	t.Helper()
	c := w.c
	what := w.kind + " " + w.name

	// The image: named as the kustomization's images entry, which names
	// what build.sh tags (its default, set in engine.sh).
	script, err := os.ReadFile("image/engine.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`image=\$\{IMAGE:-([^}]+)\}`).FindSubmatch(script)
	if m == nil {
		t.Fatal("engine.sh has no default IMAGE")
	}
	set := false
	for _, im := range kb.k.Images {
		if im.Name != c.Image {
			continue
		}
		set = true
		if im.NewName+":"+im.NewTag != string(m[1]) {
			t.Errorf("the kustomization sets the image to %s:%s, build.sh tags %s", im.NewName, im.NewTag, m[1])
		}
	}
	if !set {
		t.Errorf("%s: the container's image %q is not one the kustomization's images sets", what, c.Image)
	}
	if c.ImagePullPolicy != "IfNotPresent" {
		t.Errorf("%s: imagePullPolicy %q: want IfNotPresent, with a tag per build", what, c.ImagePullPolicy)
	}
	if w.pod.ServiceAccountName != kb.sa.Metadata.Name {
		t.Errorf("%s runs as service account %q, the kustomization makes %q", what, w.pod.ServiceAccountName, kb.sa.Metadata.Name)
	}
	if w.pod.AutomountServiceAccountToken == nil || *w.pod.AutomountServiceAccountToken {
		t.Errorf("%s mounts a service account token, but policyrun asks the API server nothing", what)
	}

	// Every path the config reads or writes is mounted: reads anywhere
	// (the config's own files in its ConfigMap), writes where they
	// outlive the container.
	files := filesOf(w.cfg)
	for _, p := range files.tails {
		if m := w.mountOf(literalDir(p)); m.Name == "" {
			t.Errorf("%s: the tail's path %s: no volume is mounted at %s", what, p, literalDir(p))
		}
	}
	for _, p := range files.reads {
		m := w.mountOf(p)
		v := w.volume(m.Name)
		switch {
		case m.Name == "" || v == nil:
			t.Errorf("%s: the config reads %s, where no volume is mounted", what, p)
		case v.ConfigMap != nil && w.generated[strings.TrimPrefix(p, m.MountPath+"/")] == "":
			t.Errorf("%s: the config reads %s, which its ConfigMap does not hold", what, p)
		}
	}
	for _, p := range files.writes {
		m := w.mountOf(p)
		v := w.volume(m.Name)
		switch {
		case m.Name == "" || m.ReadOnly || v == nil:
			t.Errorf("%s: the config writes %s, where no writable volume is mounted (the root file system is read-only)", what, p)
		case !persistent(v):
			t.Errorf("%s: the config writes %s on volume %s, which does not keep it as docs/deploy.md says", what, p, m.Name)
		}
	}
	if m := w.mountOf(w.configPath); !m.ReadOnly {
		t.Errorf("%s: the config's volume %s is mounted writable", what, m.Name)
	}
	for _, m := range c.VolumeMounts {
		if w.hostPath(m.Name) && !m.ReadOnly && !slices.ContainsFunc(files.writes, func(p string) bool { return w.mountOf(p).Name == m.Name }) {
			t.Errorf("%s: host path %s is mounted writable, but the config writes nothing there", what, m.MountPath)
		}
	}

	// Probes and the scrape reach the metrics listener of the config.
	port := w.metricsPort(t)
	for _, pr := range []struct {
		name, path string
		p          *probe
	}{{"liveness", "/healthz", c.LivenessProbe}, {"readiness", "/readyz", c.ReadinessProbe}} {
		switch {
		case pr.p == nil:
			t.Errorf("%s has no %s probe", what, pr.name)
		case pr.p.HTTPGet.Path != pr.path || w.port(pr.p.HTTPGet.Port) != port:
			t.Errorf("%s: the %s probe gets %s on port %v (%d), want %s on the metrics port %d", what, pr.name, pr.p.HTTPGet.Path, pr.p.HTTPGet.Port, w.port(pr.p.HTTPGet.Port), pr.path, port)
		}
	}
	ann := w.meta.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != strconv.Itoa(port) || ann["prometheus.io/path"] != "/metrics" {
		t.Errorf("%s: the pod's scrape annotations %v: want port %d, path /metrics", what, ann, port)
	}
	if !slices.ContainsFunc(c.Ports, func(p containerPort) bool { return p.ContainerPort == port }) {
		t.Errorf("%s: the container declares no port %d, the metrics port", what, port)
	}

	// No privilege beyond what the config needs.
	sc := c.SecurityContext
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("%s: the root file system is writable", what)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: allowPrivilegeEscalation is not false", what)
	}
	if !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Errorf("%s: capabilities drop %v, add %v: want every one dropped and none added", what, sc.Capabilities.Drop, sc.Capabilities.Add)
	}
	seccomp := sc.SeccompProfile
	if seccomp == nil {
		seccomp = w.pod.SecurityContext.SeccompProfile
	}
	if seccomp == nil || seccomp.Type != "RuntimeDefault" {
		t.Errorf("%s: seccompProfile %v, want RuntimeDefault", what, seccomp)
	}

	// The stop's room, and the resources.
	if g := w.pod.TerminationGracePeriodSeconds; g == nil {
		t.Errorf("%s: no terminationGracePeriodSeconds", what)
	} else if time.Duration(*g)*time.Second <= w.cfg.Service.Grace {
		t.Errorf("%s: terminationGracePeriodSeconds %d is not more than service.grace %v", what, *g, w.cfg.Service.Grace)
	}
	for _, res := range []string{"cpu", "memory"} {
		req, okReq := c.Resources.Requests[res]
		lim, okLim := c.Resources.Limits[res]
		switch {
		case !okReq || !okLim:
			t.Errorf("%s has no %s request and limit", what, res)
		case req.value > lim.value:
			t.Errorf("%s: its %s request %s is above its limit %s", what, res, req, lim)
		}
	}
}

// runsAsRoot: the container's user, or else the pod's, is 0.
func (w *workload) runsAsRoot() bool {
	u := w.c.SecurityContext.RunAsUser
	if u == nil {
		u = w.pod.SecurityContext.RunAsUser
	}
	return u != nil && *u == 0
}

// TestKubernetesManifests checks the manifests against each other and
// against the configs, as the code reads them.
func TestKubernetesManifests(t *testing.T) {
	kb := readKube(t)

	// One namespace, which admits pods with host paths.
	if kb.k.Namespace == "" || kb.ns.Metadata.Name != kb.k.Namespace {
		t.Errorf("the kustomization's namespace %q is not the Namespace it makes (%q)", kb.k.Namespace, kb.ns.Metadata.Name)
	}
	if lvl := kb.ns.Metadata.Labels["pod-security.kubernetes.io/enforce"]; lvl != "privileged" {
		t.Errorf("namespace %s enforces Pod Security %q, which refuses hostPath volumes", kb.ns.Metadata.Name, lvl)
	}
	for _, w := range []struct {
		name     string
		selector labelSelector
		labels   map[string]string
	}{{"DaemonSet", kb.ds.Spec.Selector, kb.agent.meta.Labels}, {"Deployment", kb.gw.Spec.Selector, kb.gateway.meta.Labels}} {
		if !w.selector.matches(w.labels) {
			t.Errorf("the %s's selector %v does not select its pods %v", w.name, w.selector.MatchLabels, w.labels)
		}
	}
	if kb.ds.Spec.Selector.matches(kb.gateway.meta.Labels) || kb.gw.Spec.Selector.matches(kb.agent.meta.Labels) {
		t.Error("the DaemonSet's and the Deployment's selectors select each other's pods")
	}

	t.Run("agent", func(t *testing.T) { checkAgent(t, kb) })
	t.Run("gateway", func(t *testing.T) { checkGateway(t, kb) })
}

// checkAgent: the node agent tails the kubelet's files with their pods'
// names and multiline, keeps its checkpoints and buffers on the node,
// runs on every node one pod at a time, and is root only to read the
// host's logs.
func checkAgent(t *testing.T, kb *kube) {
	w := kb.agent
	checkWorkload(t, kb, w, func(v *volume) bool { return v.HostPath != nil })

	// The tail of the kubelet's files with the cri parser, their pods'
	// names from the paths, and stack traces joined.
	tails := 0
	for _, in := range w.cfg.Inputs {
		if in.Name != "tail" {
			continue
		}
		tails++
		if in.Parser != "cri" || !in.KubernetesPath {
			t.Errorf("%s:%d: input %s: parser %s, kubernetes_path %v; want cri and true", w.cfgFile, in.Line, in.Alias, in.Parser, in.KubernetesPath)
		}
		if in.Multiline == nil || !slices.Equal(in.Multiline.Parsers, []string{"java", "python", "go"}) {
			t.Errorf("%s:%d: input %s does not join Java, Python and Go stack traces (multiline.parsers: [java, python, go])", w.cfgFile, in.Line, in.Alias)
		}
		if in.DB == "" {
			t.Errorf("%s:%d: input %s has no db: a restarted pod would read its files again from their ends", w.cfgFile, in.Line, in.Alias)
		}
		for _, p := range in.Paths {
			if !strings.HasPrefix(p, containersDir+"/") {
				t.Errorf("%s:%d: path %s is not under %s, whose names kubernetes_path reads", w.cfgFile, in.Line, p, containersDir)
			}
		}
	}
	if tails == 0 || len(w.cfg.Filters) == 0 {
		t.Errorf("%s: %d tail inputs and %d filters, want the node's logs through a policy", w.cfgFile, tails, len(w.cfg.Filters))
	}
	if slices.ContainsFunc(w.cfg.Inputs, func(in config.Input) bool { return in.KubernetesPath }) {
		if m := w.mountOf(podsDir); m.Name == "" {
			t.Errorf("kubernetes_path follows the links of %s to %s, which is not mounted", containersDir, podsDir)
		}
	}

	// Root only to read the host's logs.
	files := filesOf(w.cfg)
	readsHost := slices.ContainsFunc(files.tails, func(p string) bool { return w.hostPath(w.mountOf(literalDir(p)).Name) })
	if root := w.runsAsRoot(); root != readsHost {
		t.Errorf("root %v, though the agent reads host logs: %v; root is for reading the kubelet's files (root's, 0640) alone", root, readsHost)
	}

	// Every node, one at a time.
	if !slices.ContainsFunc(w.pod.Tolerations, func(tl toleration) bool {
		return tl.Operator == "Exists" && tl.Key == "" && tl.Effect == ""
	}) {
		t.Error("no toleration of every taint: the agent would not run on tainted nodes")
	}
	if s := kb.ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge; s != nil && !s.isZero() {
		t.Errorf("maxSurge %v: a surge pod would share the node's checkpoint file and buffers with the old one", s)
	}
}

// checkGateway: the gateway's Service reaches its otlp input, the agents
// send to that Service, only they may (the NetworkPolicy: the input has
// no client authentication), its buffer fits the emptyDir, its memory
// limit holds what its input may hold, and a disruption leaves one.
func checkGateway(t *testing.T, kb *kube) {
	w := kb.gateway
	checkWorkload(t, kb, w, func(v *volume) bool {
		return v.EmptyDir != nil && v.EmptyDir.Medium == "" || v.PersistentVolumeClaim != nil
	})
	if w.runsAsRoot() {
		t.Error("the gateway runs as root, which it has no need of")
	}
	if nonRoot := w.pod.SecurityContext.RunAsNonRoot; nonRoot == nil || !*nonRoot {
		t.Error("the gateway's pod does not say runAsNonRoot")
	}

	// One otlp input, which the Service's port reaches.
	var otlpIns []config.Input
	for _, in := range w.cfg.Inputs {
		if in.Name == "otlp" {
			otlpIns = append(otlpIns, in)
		}
	}
	if len(otlpIns) != 1 || len(w.cfg.Inputs) != 1 {
		t.Fatalf("%s: %d inputs, %d of them otlp: want one otlp input", w.cfgFile, len(w.cfg.Inputs), len(otlpIns))
	}
	in := otlpIns[0]
	listen := w.listenPort(t, "the otlp input's listen", in.OTLP.Listen)
	if !slices.ContainsFunc(w.c.Ports, func(p containerPort) bool { return p.ContainerPort == listen }) {
		t.Errorf("the gateway's container declares no port %d, its otlp input's", listen)
	}
	if !labelSelector(labelSelector{MatchLabels: kb.svc.Spec.Selector}).matches(w.meta.Labels) || labelSelector(labelSelector{MatchLabels: kb.svc.Spec.Selector}).matches(kb.agent.meta.Labels) {
		t.Errorf("Service %s selects %v: want the gateway's pods (%v) and not the agents'", kb.svc.Metadata.Name, kb.svc.Spec.Selector, w.meta.Labels)
	}
	if len(kb.svc.Spec.Ports) != 1 || w.port(kb.svc.Spec.Ports[0].TargetPort) != listen {
		t.Fatalf("Service %s's ports %+v: want one, to the otlp input's port %d", kb.svc.Metadata.Name, kb.svc.Spec.Ports, listen)
	}
	svcPort := int(kb.svc.Spec.Ports[0].Port)

	// The agents' output goes to the Service (by its name in their
	// namespace, or its full name).
	var endpoints []string
	for _, o := range kb.agent.cfg.Outputs {
		if s, ok := o.Settings.(*output.OTLPConfig); ok {
			endpoints = append(endpoints, s.URL)
		}
	}
	if len(endpoints) != 1 {
		t.Fatalf("%s: %d otlp outputs, want one, to the gateway", kb.agent.cfgFile, len(endpoints))
	}
	u, err := url.Parse(endpoints[0])
	if err != nil {
		t.Fatal(err)
	}
	names := []string{kb.svc.Metadata.Name, kb.svc.Metadata.Name + "." + kb.k.Namespace, kb.svc.Metadata.Name + "." + kb.k.Namespace + ".svc", kb.svc.Metadata.Name + "." + kb.k.Namespace + ".svc.cluster.local"}
	if !slices.Contains(names, u.Hostname()) || u.Port() != strconv.Itoa(svcPort) || u.Scheme != "http" {
		t.Errorf("the agent sends to %s, not to the gateway's Service (http://%s:%d)", endpoints[0], kb.svc.Metadata.Name, svcPort)
	}

	// Only the agents reach the otlp port; the metrics port stays open
	// to the probes and the scrape.
	np := kb.np.Spec
	if !np.PodSelector.matches(w.meta.Labels) || !slices.Contains(np.PolicyTypes, "Ingress") {
		t.Errorf("NetworkPolicy %s does not restrict the gateway's ingress (podSelector %v, policyTypes %v)", kb.np.Metadata.Name, np.PodSelector.MatchLabels, np.PolicyTypes)
	}
	otlpFromAgents, otlpFromAll, metricsOpen := false, false, false
	for _, rule := range np.Ingress {
		ports := map[int]bool{}
		for _, p := range rule.Ports {
			ports[w.port(p.Port)] = true
		}
		if len(rule.Ports) == 0 {
			ports[listen], ports[w.metricsPort(t)] = true, true
		}
		if len(rule.From) == 0 {
			otlpFromAll = otlpFromAll || ports[listen]
			metricsOpen = metricsOpen || ports[w.metricsPort(t)]
			continue
		}
		for _, f := range rule.From {
			if f.PodSelector != nil && f.PodSelector.matches(kb.agent.meta.Labels) && f.NamespaceSelector == nil && ports[listen] {
				otlpFromAgents = true
			}
		}
	}
	if !otlpFromAgents || otlpFromAll || !metricsOpen {
		t.Errorf("NetworkPolicy %s: the agents reach the otlp port %v, anyone does %v, the metrics port is open %v; want true, false, true", kb.np.Metadata.Name, otlpFromAgents, otlpFromAll, metricsOpen)
	}

	// The buffer fits its emptyDir, which the kubelet would evict the pod
	// past; the memory limit holds what the input may hold at once.
	for _, o := range w.cfg.Outputs {
		s, ok := o.Settings.(*output.OTLPConfig)
		if !ok || s.Buffer.Type != "filesystem" {
			t.Errorf("%s: output %s is not otlp with a filesystem buffer", w.cfgFile, o.Alias)
			continue
		}
		v := w.volume(w.mountOf(w.cfg.Service.DataDir).Name)
		if v == nil || v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.value < float64(s.Buffer.MaxSize) {
			t.Errorf("%s: output %s buffers up to %d bytes, more than its emptyDir's sizeLimit", w.cfgFile, o.Alias, s.Buffer.MaxSize)
		}
	}
	if lim := w.c.Resources.Limits["memory"]; lim.value < float64(in.OTLP.MaxInflightSize)*2 {
		t.Errorf("the gateway's memory limit %s is less than twice its input's max_inflight_size (%d bytes): the bodies and what they decode to", lim, in.OTLP.MaxInflightSize)
	}

	// A disruption leaves a gateway, and a rollout loses none.
	pdb := kb.pdb.Spec
	if !pdb.Selector.matches(w.meta.Labels) || pdb.Selector.matches(kb.agent.meta.Labels) {
		t.Errorf("PodDisruptionBudget %s selects %v: want the gateway's pods alone", kb.pdb.Metadata.Name, pdb.Selector.MatchLabels)
	}
	replicas := int32(1)
	if kb.gw.Spec.Replicas != nil {
		replicas = *kb.gw.Spec.Replicas
	}
	if pdb.MinAvailable == nil || pdb.MinAvailable.IsStr || pdb.MinAvailable.IntVal < 1 || int32(pdb.MinAvailable.IntVal) >= replicas {
		t.Errorf("PodDisruptionBudget %s: minAvailable %v of %d replicas: want at least 1 and fewer than all, or no drain could proceed", kb.pdb.Metadata.Name, pdb.MinAvailable, replicas)
	}
	if u := kb.gw.Spec.Strategy.RollingUpdate.MaxUnavailable; u == nil || !u.isZero() {
		t.Errorf("the gateway's rollout has maxUnavailable %v, want 0", u)
	}
}

// podRoot makes a root of w's mounts holding its ConfigMap's files, and
// returns it, w's command line made under it, and where its config is.
func podRoot(t *testing.T, w *workload) (r *root, args []string, conf string) {
	t.Helper()
	var mounts []string
	for _, m := range w.c.VolumeMounts {
		mounts = append(mounts, m.MountPath)
	}
	r = newRoot(t, mounts...)
	for name, file := range w.generated {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(r.path(filepath.Join(w.mountOf(w.configPath).MountPath, name)), []byte(r.remap(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return r, strings.Fields(r.remap(strings.Join(w.c.Args, " "))), r.path(w.configPath)
}

// The pod whose container log the agent tests write.
const (
	testPod, testNS, testCtr = "checkout-7d9f", "shop", "app"
	testUID                  = "9a3c1e52-0d7e-4d6b-8d0f-2f1f3b9e6c11"
	testID                   = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

// containerLog makes a container's log where the kubelet writes it
// under r, and its link, and returns a function that appends CRI lines
// to it (each given without its time).
func containerLog(t *testing.T, r *root) func(lines ...string) {
	t.Helper()
	logFile := r.path(filepath.Join(podsDir, testNS+"_"+testPod+"_"+testUID, testCtr, "0.log"))
	if err := os.MkdirAll(filepath.Dir(logFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logFile, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(logFile, r.path(filepath.Join(containersDir, testPod+"_"+testNS+"_"+testCtr+"-"+testID+".log"))); err != nil {
		t.Fatal(err)
	}
	return func(lines ...string) {
		t.Helper()
		f, err := os.OpenFile(logFile, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, l := range lines {
			if _, err := fmt.Fprintf(f, "2026-12-01T10:00:00.000000000Z %s\n", l); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A Java stack trace, each line as the runtime writes it to a CRI log
// (one frame split in a P and an F part), and the one record it must
// arrive as.
var (
	javaTrace = []string{
		"java.lang.IllegalStateException: payment declined for order 81723",
		"\tat com.example.shop.payment.PaymentService.charge(PaymentService.java:87)",
		"\tat com.example.shop.order.OrderService.submit(OrderService.java:142)",
		"Caused by: com.example.shop.payment.GatewayException: gateway answered 502",
		"\tat com.example.shop.payment.GatewayClient.post(GatewayClient.java:211)",
		"\t... 9 more",
	}
	javaTraceCRI = []string{
		"stdout F " + javaTrace[0],
		"stdout F " + javaTrace[1],
		"stdout P " + javaTrace[2][:20],
		"stdout F " + javaTrace[2][20:],
		"stdout F " + javaTrace[3],
		"stdout F " + javaTrace[4],
		"stdout F " + javaTrace[5],
	}
)

// withPod adds the test pod's attributes, as node-agent.policy sets
// them, to each record.
func withPod(recs []received) []received {
	for i := range recs {
		for k, v := range map[string]string{"k8s.pod.name": testPod, "k8s.namespace.name": testNS, "k8s.container.name": testCtr, "k8s.pod.uid": testUID, "container.id": testID} {
			recs[i].attrs[k] = v
		}
	}
	return recs
}

// TestKubernetesAgent runs the agent as the DaemonSet would: its
// command line, with --check, passes in a root made of the pod's mounts
// and the ConfigMap's files; then, run, it reads a container's CRI log
// through the kubelet's link, sends its lines (a Java stack trace as one
// record) with their pod's names to an OTLP receiver, answers its
// probes, keeps what the receiver could not take across a restart, and
// stops within the pod's grace period.
func TestKubernetesAgent(t *testing.T) {
	bin := binary(t)
	t.Parallel()
	kb := readKube(t)
	w := kb.agent
	r, args, conf := podRoot(t, w)
	mustCheck(t, bin, args)

	// A run: the metrics on a free loopback port, the output to a
	// receiver of the test.
	recv := newReceiver(t)
	setScalars(t, conf, "service.metrics", "127.0.0.1:0", "pipeline.outputs.endpoint", recv.srv.URL)
	appendLog := containerLog(t, r)

	a := startAgent(t, bin, args...)
	base := "http://" + a.metricsAddr(t)
	w.waitProbes(t, base)
	// The line after the trace ends it, as a program that goes on
	// logging would.
	appendLog(slices.Concat([]string{
		"stdout F order 1234 paid",
		`stdout F 10.0.0.1 - - "GET /healthz HTTP/1.1" 200 2 "-" "kube-probe/1.31"`,
		"stderr P a line the runtime ",
		"stderr F split in two",
	}, javaTraceCRI, []string{"stdout F order 1235 paid"})...)
	recv.expectFromPod(t, []received{
		{body: "order 1234 paid", attrs: map[string]string{"log.iostream": "stdout"}},
		{body: "a line the runtime split in two", attrs: map[string]string{"log.iostream": "stderr"}},
		{body: strings.Join(javaTrace, "\n"), attrs: map[string]string{"log.iostream": "stdout"}},
		{body: "order 1235 paid", attrs: map[string]string{"log.iostream": "stdout"}},
	})

	// The receiver goes away: what is read meanwhile is held on the
	// node, and a stop waits for it no longer than the pod allows.
	backendDown(t, recv, appendLog, base)
	grace := w.grace()
	took := a.stop(t, syscall.SIGTERM, grace)
	t.Logf("stopped in %v with the backend down (service.grace %v, terminationGracePeriodSeconds %v)", took.Round(time.Millisecond), w.cfg.Service.Grace, grace)

	// The next pod on the node sends what was held, and nothing twice.
	recv2 := newReceiver(t)
	setScalars(t, conf, "pipeline.outputs.endpoint", recv2.srv.URL)
	a = startAgent(t, bin, args...)
	a.metricsAddr(t)
	recv2.waitFor(t, 1)
	time.Sleep(500 * time.Millisecond) // anything more would be a duplicate
	recv2.mu.Lock()
	got := slices.Clone(recv2.records)
	recv2.mu.Unlock()
	if len(got) != 1 || got[0].body != "written while the backend was down" {
		t.Errorf("after the restart the receiver got %v, want the one line written while it was down", got)
	}
	took = a.stop(t, syscall.SIGTERM, grace)
	t.Logf("stopped in %v with the backend up", took.Round(time.Millisecond))
}

// TestKubernetesGateway runs the gateway as its Deployment would: its
// command line, with --check, passes in a root made of its mounts and
// its ConfigMap's files, and warns, as docs/deploy.md says, that the
// otlp input authenticates no client. Then the node agent, run as in
// TestKubernetesAgent, sends to it, and it to a receiver of the test: a
// container's lines and a Java stack trace arrive with their pods'
// attributes through both. The gateway answers its probes, holds what
// the receiver cannot take in its buffer, and stops within its grace
// period.
func TestKubernetesGateway(t *testing.T) {
	bin := binary(t)
	t.Parallel()
	kb := readKube(t)
	gw := kb.gateway
	_, gargs, gconf := podRoot(t, gw)
	code, out := runPolicyrun(t, bin, checkArgs(t, gargs)...)
	if code != 0 || !strings.Contains(out, ": ok (") {
		t.Fatalf("policyrun %s: exit %d\n%s", strings.Join(checkArgs(t, gargs), " "), code, out)
	}
	if !strings.Contains(out, "authenticates no client") {
		t.Errorf("the gateway's check does not warn that its otlp input authenticates no client, which docs/deploy.md says it does:\n%s", out)
	}
	t.Logf("policyrun %s:\n%s", strings.Join(checkArgs(t, gargs), " "), out)

	// The gateway: its listeners on loopback, its output to a receiver.
	recv := newReceiver(t)
	setScalars(t, gconf, "service.metrics", "127.0.0.1:0", "pipeline.outputs.endpoint", recv.srv.URL)
	g, listen := startGateway(t, bin, gconf, gargs)
	gbase := "http://" + g.metricsAddr(t)
	gw.waitProbes(t, gbase)

	// The agent, its output to the gateway (the Service's name stands
	// for the address here).
	r, aargs, aconf := podRoot(t, kb.agent)
	setScalars(t, aconf, "service.metrics", "127.0.0.1:0", "pipeline.outputs.endpoint", "http://"+listen)
	appendLog := containerLog(t, r)
	a := startAgent(t, bin, aargs...)
	a.metricsAddr(t)
	appendLog(slices.Concat([]string{"stdout F order 1234 paid"}, javaTraceCRI, []string{"stdout F order 1235 paid"})...)
	recv.expectFromPod(t, []received{
		{body: "order 1234 paid", attrs: map[string]string{"log.iostream": "stdout"}},
		{body: strings.Join(javaTrace, "\n"), attrs: map[string]string{"log.iostream": "stdout"}},
		{body: "order 1235 paid", attrs: map[string]string{"log.iostream": "stdout"}},
	})

	// The backend goes away: the gateway holds what comes meanwhile,
	// and stops within the pod's grace period.
	backendDown(t, recv, appendLog, gbase)
	grace := gw.grace()
	a.stop(t, syscall.SIGTERM, grace)
	took := g.stop(t, syscall.SIGTERM, grace)
	t.Logf("the gateway stopped in %v with the backend down (service.grace %v, terminationGracePeriodSeconds %v)", took.Round(time.Millisecond), gw.cfg.Service.Grace, grace)
}

// startGateway starts the gateway of args, its config at conf, with its
// otlp input on a free loopback port, and returns it and that address.
// The port is picked before the gateway binds it (policyrun run does not
// say where its otlp input listens), and another process may take it
// meanwhile: the gateway then ends at once, and another port is tried.
func startGateway(t *testing.T, bin, conf string, args []string) (*agent, string) {
	t.Helper()
	for range 5 {
		listen := testnet.FreeAddr(t)
		setScalars(t, conf, "pipeline.inputs.listen", listen)
		g := startAgent(t, bin, args...)
		if _, ok := g.waitMetricsAddr(t); ok {
			return g, listen
		}
		if !strings.Contains(g.stderr.String(), "address already in use") {
			t.Fatalf("the gateway ended: %v\n%s", g.err, g.stderr.String())
		}
		t.Logf("the gateway could not listen at %s, taken meanwhile; another port", listen)
	}
	t.Fatal("the gateway found no free port in 5 tries")
	return nil, ""
}

// expectFromPod waits until r holds len(want) records and checks that
// they are want, each with the test pod's attributes.
func (r *receiver) expectFromPod(t *testing.T, want []received) {
	t.Helper()
	want = withPod(want)
	if got := r.waitFor(t, len(want)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the receiver got\n%v\nwant\n%v", got, want)
	}
}

// backendDown closes recv, appends a line to the container log and
// waits until the pipeline whose metrics are at base holds it in a
// buffer.
func backendDown(t *testing.T, recv *receiver, appendLog func(...string), base string) {
	t.Helper()
	recv.srv.Close()
	appendLog("stdout F written while the backend was down")
	waitBuffered(t, base)
}

// grace is w's pod's termination grace period.
func (w *workload) grace() time.Duration {
	return time.Duration(*w.pod.TerminationGracePeriodSeconds) * time.Second
}

// waitProbes waits until the liveness and readiness probes of w, run at
// base, pass.
func (w *workload) waitProbes(t *testing.T, base string) {
	t.Helper()
	waitStatus(t, base+w.c.LivenessProbe.HTTPGet.Path, 200)
	waitStatus(t, base+w.c.ReadinessProbe.HTTPGet.Path, 200)
}

// waitBuffered waits until the agent's metrics say its outputs' buffers
// hold something.
func waitBuffered(t *testing.T, base string) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^policyrun_output_buffer_chunks\{[^}]*\} ([1-9]\d*)$`)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if body := get(t, base+"/metrics"); re.MatchString(body) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the output's buffer never held the line:\n%s", get(t, base+"/metrics"))
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
