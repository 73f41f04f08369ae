package deploy

// The manifests checked against each other and against the configs
// they run, as read by kubernetes_test.go.

import (
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/pipeline/output"
)

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
