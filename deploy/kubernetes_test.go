package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
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

	"go.yaml.in/yaml/v3"

	"github.com/policyrun/policyrun/pipeline/config"
)

const kubeDir = "kubernetes"

// Where the kubelet keeps container logs (pipeline/kubernetes.go): the
// files of containersDir link to files under podsDir.
const (
	containersDir = "/var/log/containers"
	podsDir       = "/var/log/pods"
)

// The parts of the manifests the tests read. Decoding is strict
// (KnownFields): a key these types do not know, a misspelt field of the
// manifests included, fails the test, as the API server would refuse
// it. A field the manifests come to need is added here.

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

type toleration struct {
	Key      string `yaml:"key"`
	Operator string `yaml:"operator"`
	Effect   string `yaml:"effect"`
}

type containerPort struct {
	Name          string `yaml:"name"`
	ContainerPort int    `yaml:"containerPort"`
	Protocol      string `yaml:"protocol"`
}

type objectMeta struct {
	Name        string            `yaml:"name"`
	Namespace   string            `yaml:"namespace"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

// object is any resource, for its kind and name.
type object struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
}

type namespace struct {
	object `yaml:",inline"`
}

type serviceAccount struct {
	object                       `yaml:",inline"`
	AutomountServiceAccountToken *bool `yaml:"automountServiceAccountToken"`
}

type daemonSet struct {
	object `yaml:",inline"`
	Spec   struct {
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		UpdateStrategy struct {
			Type          string `yaml:"type"`
			RollingUpdate struct {
				MaxUnavailable any `yaml:"maxUnavailable"`
				MaxSurge       any `yaml:"maxSurge"`
			} `yaml:"rollingUpdate"`
		} `yaml:"updateStrategy"`
		Template struct {
			Metadata objectMeta `yaml:"metadata"`
			Spec     podSpec    `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type podSpec struct {
	ServiceAccountName            string       `yaml:"serviceAccountName"`
	AutomountServiceAccountToken  *bool        `yaml:"automountServiceAccountToken"`
	TerminationGracePeriodSeconds *int         `yaml:"terminationGracePeriodSeconds"`
	Tolerations                   []toleration `yaml:"tolerations"`
	Containers                    []container  `yaml:"containers"`
	Volumes                       []struct {
		Name      string `yaml:"name"`
		ConfigMap *struct {
			Name string `yaml:"name"`
		} `yaml:"configMap"`
		HostPath *struct {
			Path string `yaml:"path"`
			Type string `yaml:"type"`
		} `yaml:"hostPath"`
		EmptyDir *struct{} `yaml:"emptyDir"`
	} `yaml:"volumes"`
}

type container struct {
	Name            string          `yaml:"name"`
	Image           string          `yaml:"image"`
	ImagePullPolicy string          `yaml:"imagePullPolicy"`
	Command         []string        `yaml:"command"`
	Args            []string        `yaml:"args"`
	Ports           []containerPort `yaml:"ports"`
	LivenessProbe   *probe          `yaml:"livenessProbe"`
	ReadinessProbe  *probe          `yaml:"readinessProbe"`
	Resources       struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	SecurityContext struct {
		RunAsUser                *int  `yaml:"runAsUser"`
		RunAsGroup               *int  `yaml:"runAsGroup"`
		RunAsNonRoot             *bool `yaml:"runAsNonRoot"`
		ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		Capabilities             struct {
			Add  []string `yaml:"add"`
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
		SeccompProfile struct {
			Type string `yaml:"type"`
		} `yaml:"seccompProfile"`
	} `yaml:"securityContext"`
	VolumeMounts []volumeMount `yaml:"volumeMounts"`
}

type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port any    `yaml:"port"`
	} `yaml:"httpGet"`
	InitialDelaySeconds int `yaml:"initialDelaySeconds"`
	PeriodSeconds       int `yaml:"periodSeconds"`
	TimeoutSeconds      int `yaml:"timeoutSeconds"`
	FailureThreshold    int `yaml:"failureThreshold"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
	ReadOnly  bool   `yaml:"readOnly"`
}

// strict decodes one YAML document into v, refusing unknown keys.
func strict(src []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// kube is the node agent's manifests, read as kustomize would build them.
type kube struct {
	k          kustomization
	objects    []object
	ns         namespace
	sa         serviceAccount
	ds         daemonSet
	c          container         // the agent's
	generated  map[string]string // the ConfigMap generator's name: its files
	configPath string            // the agent's config, where the pod has it
	cfgFile    string            // that config in the repository
	cfg        *config.Config
}

func readKube(t *testing.T) *kube {
	t.Helper()
	var kb kube
	src, err := os.ReadFile(filepath.Join(kubeDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := strict(src, &kb.k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	for _, res := range kb.k.Resources {
		src, err := os.ReadFile(filepath.Join(kubeDir, res))
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(src))
		for {
			var node yaml.Node
			if err := dec.Decode(&node); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", res, err)
			}
			doc, err := yaml.Marshal(&node)
			if err != nil {
				t.Fatal(err)
			}
			var o object
			if err := yaml.Unmarshal(doc, &o); err != nil {
				t.Fatalf("%s: %v", res, err)
			}
			var into any
			switch o.Kind {
			case "Namespace":
				into = &kb.ns
			case "ServiceAccount":
				into = &kb.sa
			case "DaemonSet":
				into = &kb.ds
			default:
				t.Fatalf("%s: a %s, which the test does not read: add it", res, o.Kind)
			}
			if err := strict(doc, into); err != nil {
				t.Fatalf("%s (%s %s): %v", res, o.Kind, o.Metadata.Name, err)
			}
			kb.objects = append(kb.objects, o)
		}
	}
	for _, want := range []string{"Namespace", "ServiceAccount", "DaemonSet"} {
		if !slices.ContainsFunc(kb.objects, func(o object) bool { return o.Kind == want }) {
			t.Fatalf("the kustomization has no %s", want)
		}
	}
	if n := len(kb.ds.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("the DaemonSet has %d containers, want the agent alone", n)
	}
	kb.c = kb.ds.Spec.Template.Spec.Containers[0]

	kb.generated = map[string]string{}
	var configMap string
	for _, v := range kb.ds.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil {
			configMap = v.ConfigMap.Name
		}
	}
	kb.configPath = configArg(t, kb.c.Args)
	for _, g := range kb.k.ConfigMapGenerator {
		if g.Name != configMap {
			continue
		}
		for _, f := range g.Files {
			kb.generated[filepath.Base(f)] = filepath.Join(kubeDir, f)
		}
	}
	if len(kb.generated) == 0 {
		t.Fatalf("no configMapGenerator of the kustomization makes the DaemonSet's ConfigMap %q", configMap)
	}
	kb.cfgFile = kb.generated[filepath.Base(kb.configPath)]
	if kb.cfgFile == "" {
		t.Fatalf("the agent runs %s, which the ConfigMap %s does not hold (it holds %v)", kb.configPath, configMap, kb.generated)
	}
	kb.cfg = loadConfig(t, kb.cfgFile, kb.configPath)
	return &kb
}

// mountOf is the agent's volume mount that holds path ("" when none).
func (kb *kube) mountOf(path string) volumeMount {
	var best volumeMount
	for _, m := range kb.c.VolumeMounts {
		if (path == m.MountPath || strings.HasPrefix(path, m.MountPath+"/")) && len(m.MountPath) > len(best.MountPath) {
			best = m
		}
	}
	return best
}

func (kb *kube) volume(name string) (hostPath bool, configMap bool) {
	for _, v := range kb.ds.Spec.Template.Spec.Volumes {
		if v.Name == name {
			return v.HostPath != nil, v.ConfigMap != nil
		}
	}
	return false, false
}

// metricsPort is the port of the config's metrics listener, which the
// probes and the scrape must reach.
func (kb *kube) metricsPort(t *testing.T) int {
	t.Helper()
	host, port, err := net.SplitHostPort(kb.cfg.Service.Metrics)
	if err != nil {
		t.Fatalf("%s: service.metrics %q: %v", kb.cfgFile, kb.cfg.Service.Metrics, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
		t.Errorf("%s: service.metrics listens on %s: the kubelet probes the pod's address, which only an unspecified address (0.0.0.0, [::]) takes", kb.cfgFile, host)
	}
	n, _ := strconv.Atoi(port)
	return n
}

// TestKubernetesManifests checks the manifests against each other and
// against the agent's config, as the config is read by the code.
func TestKubernetesManifests(t *testing.T) {
	kb := readKube(t)
	c, pod := kb.c, kb.ds.Spec.Template.Spec

	// One namespace, which admits pods with host paths.
	if kb.k.Namespace == "" || kb.ns.Metadata.Name != kb.k.Namespace {
		t.Errorf("the kustomization's namespace %q is not the Namespace it makes (%q)", kb.k.Namespace, kb.ns.Metadata.Name)
	}
	if lvl := kb.ns.Metadata.Labels["pod-security.kubernetes.io/enforce"]; lvl != "privileged" {
		t.Errorf("namespace %s enforces Pod Security %q, which refuses hostPath volumes", kb.ns.Metadata.Name, lvl)
	}
	if pod.ServiceAccountName != kb.sa.Metadata.Name {
		t.Errorf("the pod runs as service account %q, the kustomization makes %q", pod.ServiceAccountName, kb.sa.Metadata.Name)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("the pod mounts a service account token, but the agent asks the API server nothing")
	}

	// The image: named in the DaemonSet as the kustomization's images
	// entry, which names what build.sh tags.
	script, err := os.ReadFile("image/build.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`image=\$\{IMAGE:-([^}]+)\}`).FindSubmatch(script)
	if m == nil {
		t.Fatal("build.sh has no default IMAGE")
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
		t.Errorf("the container's image %q is not one the kustomization's images sets", c.Image)
	}
	if c.ImagePullPolicy != "IfNotPresent" {
		t.Errorf("imagePullPolicy %q: want IfNotPresent, with a tag per build", c.ImagePullPolicy)
	}

	// The agent's config: the tail of the kubelet's files with the cri
	// parser and their pods' names from the paths.
	tails := 0
	for _, in := range kb.cfg.Inputs {
		if in.Name != "tail" {
			continue
		}
		tails++
		if in.Parser != "cri" || !in.KubernetesPath {
			t.Errorf("%s:%d: input %s: parser %s, kubernetes_path %v; want cri and true", kb.cfgFile, in.Line, in.Alias, in.Parser, in.KubernetesPath)
		}
		if in.Multiline == nil || !slices.Equal(in.Multiline.Parsers, []string{"java", "python", "go"}) {
			t.Errorf("%s:%d: input %s does not join Java, Python and Go stack traces (multiline.parsers: [java, python, go])", kb.cfgFile, in.Line, in.Alias)
		}
		if in.DB == "" {
			t.Errorf("%s:%d: input %s has no db: a restarted pod would read its files again from their ends", kb.cfgFile, in.Line, in.Alias)
		}
		for _, p := range in.Paths {
			if !strings.HasPrefix(p, containersDir+"/") {
				t.Errorf("%s:%d: path %s is not under %s, whose names kubernetes_path reads", kb.cfgFile, in.Line, p, containersDir)
			}
		}
	}
	if tails == 0 || len(kb.cfg.Filters) == 0 {
		t.Errorf("%s: %d tail inputs and %d filters, want the node's logs through a policy", kb.cfgFile, tails, len(kb.cfg.Filters))
	}

	// Every path the config reads or writes is mounted: reads anywhere
	// (the config's own files in its ConfigMap), writes where they
	// outlive the pod.
	files := filesOf(kb.cfg)
	for _, p := range files.tails {
		if m := kb.mountOf(literalDir(p)); m.Name == "" {
			t.Errorf("the tail's path %s: no volume is mounted at %s", p, literalDir(p))
		}
	}
	if slices.ContainsFunc(kb.cfg.Inputs, func(in config.Input) bool { return in.KubernetesPath }) {
		if m := kb.mountOf(podsDir); m.Name == "" {
			t.Errorf("kubernetes_path follows the links of %s to %s, which is not mounted", containersDir, podsDir)
		}
	}
	for _, p := range files.reads {
		m := kb.mountOf(p)
		_, fromConfigMap := kb.volume(m.Name)
		switch {
		case m.Name == "":
			t.Errorf("the config reads %s, where no volume is mounted", p)
		case fromConfigMap && kb.generated[strings.TrimPrefix(p, m.MountPath+"/")] == "":
			t.Errorf("the config reads %s, which its ConfigMap does not hold", p)
		}
	}
	for _, p := range files.writes {
		m := kb.mountOf(p)
		hostPath, _ := kb.volume(m.Name)
		switch {
		case m.Name == "" || m.ReadOnly:
			t.Errorf("the config writes %s, where no writable volume is mounted (the root file system is read-only)", p)
		case !hostPath:
			t.Errorf("the config writes %s on volume %s, which is not a hostPath: checkpoints and buffers would not outlive the pod", p, m.Name)
		}
	}
	if m := kb.mountOf(kb.configPath); !m.ReadOnly {
		t.Errorf("the config's volume %s is mounted writable", m.Name)
	}
	for _, m := range c.VolumeMounts {
		if hostPath, _ := kb.volume(m.Name); hostPath && !m.ReadOnly && !slices.ContainsFunc(files.writes, func(p string) bool { return kb.mountOf(p).Name == m.Name }) {
			t.Errorf("host path %s is mounted writable, but the config writes nothing there", m.MountPath)
		}
	}

	// Probes and the scrape reach the metrics listener of the config.
	port := kb.metricsPort(t)
	portOf := func(p any) int {
		switch v := p.(type) {
		case int:
			return v
		case string:
			for _, cp := range c.Ports {
				if cp.Name == v {
					return cp.ContainerPort
				}
			}
		}
		return -1
	}
	for _, pr := range []struct {
		name, path string
		p          *probe
	}{{"liveness", "/healthz", c.LivenessProbe}, {"readiness", "/readyz", c.ReadinessProbe}} {
		switch {
		case pr.p == nil:
			t.Errorf("the agent has no %s probe", pr.name)
		case pr.p.HTTPGet.Path != pr.path || portOf(pr.p.HTTPGet.Port) != port:
			t.Errorf("the %s probe gets %s on port %v (%d), want %s on the metrics port %d", pr.name, pr.p.HTTPGet.Path, pr.p.HTTPGet.Port, portOf(pr.p.HTTPGet.Port), pr.path, port)
		}
	}
	ann := kb.ds.Spec.Template.Metadata.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != strconv.Itoa(port) || ann["prometheus.io/path"] != "/metrics" {
		t.Errorf("the pod's scrape annotations %v: want port %d, path /metrics", ann, port)
	}
	if !slices.ContainsFunc(c.Ports, func(p containerPort) bool { return p.ContainerPort == port }) {
		t.Errorf("the container declares no port %d, the metrics port", port)
	}

	// Privileges: root only to read the host's logs, and nothing else.
	sc := c.SecurityContext
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("the root file system is writable")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation is not false")
	}
	if !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Errorf("capabilities drop %v, add %v: want every one dropped and none added", sc.Capabilities.Drop, sc.Capabilities.Add)
	}
	readsHost := slices.ContainsFunc(files.tails, func(p string) bool {
		hostPath, _ := kb.volume(kb.mountOf(literalDir(p)).Name)
		return hostPath
	})
	if root := sc.RunAsUser != nil && *sc.RunAsUser == 0; root != readsHost {
		t.Errorf("runAsUser %v, though the agent reads host logs: %v; root is for reading the kubelet's files (root's, 0640) alone", sc.RunAsUser, readsHost)
	}
	if sc.SeccompProfile.Type != "RuntimeDefault" {
		t.Errorf("seccompProfile %q, want RuntimeDefault", sc.SeccompProfile.Type)
	}

	// Every node, and the stop's room.
	if !slices.ContainsFunc(pod.Tolerations, func(tl toleration) bool {
		return tl.Operator == "Exists" && tl.Key == "" && tl.Effect == ""
	}) {
		t.Error("no toleration of every taint: the agent would not run on tainted nodes")
	}
	if g := pod.TerminationGracePeriodSeconds; g == nil {
		t.Error("no terminationGracePeriodSeconds")
	} else if time.Duration(*g)*time.Second <= kb.cfg.Service.Grace {
		t.Errorf("terminationGracePeriodSeconds %d is not more than service.grace %v", *g, kb.cfg.Service.Grace)
	}
	if s := kb.ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge; s != nil && s != 0 && s != "0" && s != "0%" {
		t.Errorf("maxSurge %v: a surge pod would share the node's checkpoint file and buffers with the old one", s)
	}
	for _, res := range []string{"cpu", "memory"} {
		if c.Resources.Requests[res] == "" || c.Resources.Limits[res] == "" {
			t.Errorf("the agent has no %s request and limit", res)
		}
	}
}

// TestKubernetesAgent runs the agent as the DaemonSet would: its
// command line, with --check, passes in a root made of the pod's mounts
// and the ConfigMap's files; then, run, it reads a container's CRI log
// through the kubelet's link, sends its lines (a Java stack trace as one
// record) with their pod's names to an OTLP receiver, answers its probes, keeps what the receiver could
// not take across a restart, and stops within the pod's grace period.
func TestKubernetesAgent(t *testing.T) {
	bin := binary(t)
	t.Parallel()
	kb := readKube(t)
	var mounts []string
	for _, m := range kb.c.VolumeMounts {
		mounts = append(mounts, m.MountPath)
	}
	r := newRoot(t, mounts...)
	for name, file := range kb.generated {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(r.path(filepath.Join(kb.mountOf(kb.configPath).MountPath, name)), []byte(r.remap(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := strings.Fields(r.remap(strings.Join(kb.c.Args, " ")))
	mustCheck(t, bin, args)

	// A run: the metrics on a free loopback port, the output to a
	// receiver of the test.
	conf := r.path(kb.configPath)
	src, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	recv := newReceiver(t)
	src = setScalars(t, src, "127.0.0.1:0", "service", "metrics")
	src = setScalars(t, src, recv.srv.URL, "pipeline", "outputs", "endpoint")
	if err := os.WriteFile(conf, src, 0o644); err != nil {
		t.Fatal(err)
	}

	// A container's log where the kubelet writes it, and its link.
	const (
		pod, ns, ctr = "checkout-7d9f", "shop", "app"
		uid          = "9a3c1e52-0d7e-4d6b-8d0f-2f1f3b9e6c11"
		id           = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	)
	logFile := r.path(filepath.Join(podsDir, ns+"_"+pod+"_"+uid, ctr, "0.log"))
	if err := os.MkdirAll(filepath.Dir(logFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logFile, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(logFile, r.path(filepath.Join(containersDir, pod+"_"+ns+"_"+ctr+"-"+id+".log"))); err != nil {
		t.Fatal(err)
	}
	appendLog := func(lines ...string) {
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

	a := startAgent(t, bin, args...)
	base := "http://" + a.metricsAddr(t)
	waitStatus(t, base+kb.c.LivenessProbe.HTTPGet.Path, 200)
	waitStatus(t, base+kb.c.ReadinessProbe.HTTPGet.Path, 200)
	// A Java stack trace as the runtime writes it, a line to a CRI
	// record and a long frame split in two parts, must arrive as one
	// record (multiline, after the cri parser); the line after it ends
	// it, as a program that goes on logging would.
	trace := []string{
		"java.lang.IllegalStateException: payment declined for order 81723",
		"\tat com.example.shop.payment.PaymentService.charge(PaymentService.java:87)",
		"\tat com.example.shop.order.OrderService.submit(OrderService.java:142)",
		"Caused by: com.example.shop.payment.GatewayException: gateway answered 502",
		"\tat com.example.shop.payment.GatewayClient.post(GatewayClient.java:211)",
		"\t... 9 more",
	}
	appendLog(
		"stdout F order 1234 paid",
		`stdout F 10.0.0.1 - - "GET /healthz HTTP/1.1" 200 2 "-" "kube-probe/1.31"`,
		"stderr P a line the runtime ",
		"stderr F split in two",
		"stdout F "+trace[0],
		"stdout F "+trace[1],
		"stdout P "+trace[2][:20],
		"stdout F "+trace[2][20:],
		"stdout F "+trace[3],
		"stdout F "+trace[4],
		"stdout F "+trace[5],
		"stdout F order 1235 paid",
	)
	want := []received{
		{body: "order 1234 paid", attrs: map[string]string{"log.iostream": "stdout"}},
		{body: "a line the runtime split in two", attrs: map[string]string{"log.iostream": "stderr"}},
		{body: strings.Join(trace, "\n"), attrs: map[string]string{"log.iostream": "stdout"}},
		{body: "order 1235 paid", attrs: map[string]string{"log.iostream": "stdout"}},
	}
	got := recv.waitFor(t, len(want))
	for i := range want {
		for k, v := range map[string]string{"k8s.pod.name": pod, "k8s.namespace.name": ns, "k8s.container.name": ctr, "k8s.pod.uid": uid, "container.id": id} {
			want[i].attrs[k] = v
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the receiver got\n%v\nwant\n%v", got, want)
	}

	// The receiver goes away: what is read meanwhile is held on the
	// node, and a stop waits for it no longer than the pod allows.
	recv.srv.Close()
	appendLog("stdout F written while the backend was down")
	waitBuffered(t, base)
	grace := time.Duration(*kb.ds.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
	took := a.stop(t, syscall.SIGTERM, grace)
	t.Logf("stopped in %v with the backend down (service.grace %v, terminationGracePeriodSeconds %v)", took.Round(time.Millisecond), kb.cfg.Service.Grace, grace)

	// The next pod on the node sends what was held, and nothing twice.
	recv2 := newReceiver(t)
	if err := os.WriteFile(conf, setScalars(t, src, recv2.srv.URL, "pipeline", "outputs", "endpoint"), 0o644); err != nil {
		t.Fatal(err)
	}
	a = startAgent(t, bin, args...)
	a.metricsAddr(t)
	got = recv2.waitFor(t, 1)
	time.Sleep(500 * time.Millisecond) // anything more would be a duplicate
	recv2.mu.Lock()
	got = slices.Clone(recv2.records)
	recv2.mu.Unlock()
	if len(got) != 1 || got[0].body != "written while the backend was down" {
		t.Errorf("after the restart the receiver got %v, want the one line written while it was down", got)
	}
	took = a.stop(t, syscall.SIGTERM, grace)
	t.Logf("stopped in %v with the backend up", took.Round(time.Millisecond))
}

// waitBuffered waits until the agent's metrics say its outputs' buffers
// hold something.
func waitBuffered(t *testing.T, base string) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^policyrun_output_buffer_chunks\{[^}]*\} ([1-9]\d*)$`)
	deadline := time.Now().Add(20 * time.Second)
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
// DaemonSet's image is the one the kustomization sets, its ConfigMap is
// the generator's (under its hashed name) holding the files as they are,
// and every object is in the kustomization's namespace.
func TestKubernetesKustomize(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not installed: the kustomization is checked by its parts only")
	}
	kb := readKube(t)
	out, err := exec.Command("kubectl", "kustomize", kubeDir).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", kubeDir, err)
	}
	type built struct {
		Kind     string            `yaml:"kind"`
		Metadata objectMeta        `yaml:"metadata"`
		Data     map[string]string `yaml:"data"`
		Spec     struct {
			Template struct {
				Spec podSpec `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	var objs []built
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var o built
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	if len(objs) != len(kb.objects)+1 {
		t.Errorf("kubectl kustomize made %d objects, want the %d resources and the ConfigMap", len(objs), len(kb.objects))
	}
	var ds *built
	configMaps := map[string]map[string]string{}
	for i, o := range objs {
		if o.Kind != "Namespace" && o.Metadata.Namespace != kb.k.Namespace {
			t.Errorf("%s %s is in namespace %q, not %q", o.Kind, o.Metadata.Name, o.Metadata.Namespace, kb.k.Namespace)
		}
		switch o.Kind {
		case "DaemonSet":
			ds = &objs[i]
		case "ConfigMap":
			configMaps[o.Metadata.Name] = o.Data
		}
	}
	if ds == nil {
		t.Fatal("kubectl kustomize made no DaemonSet")
	}
	pod := ds.Spec.Template.Spec
	for _, im := range kb.k.Images {
		if pod.Containers[0].Image != im.NewName+":"+im.NewTag {
			t.Errorf("the built DaemonSet runs %s, the kustomization sets %s:%s", pod.Containers[0].Image, im.NewName, im.NewTag)
		}
	}
	for _, v := range pod.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		data, ok := configMaps[v.ConfigMap.Name]
		if !ok {
			t.Fatalf("the built DaemonSet mounts ConfigMap %s, which the build does not make", v.ConfigMap.Name)
		}
		if len(data) != len(kb.generated) {
			t.Errorf("the built ConfigMap holds %d files, the generator %d", len(data), len(kb.generated))
		}
		for name, file := range kb.generated {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if data[name] != string(b) {
				t.Errorf("the built ConfigMap's %s is not %s", name, file)
			}
		}
	}
}
