package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The Kubernetes objects the manifests are made of, as Go types with the
// API's field names and value types (k8s.io/api's, for the fields the
// manifests use and no others). They are defined here rather than
// imported because k8s.io/api and apimachinery would be a large
// dependency for a test; a field the manifests come to use is added here,
// with its API type. Decoding is strict (yaml.v3's KnownFields): a key
// these types do not know, a misspelt field of a manifest included,
// fails, as the API server would refuse it; so does a value of the wrong
// type (a string where the API takes a number, a port that is neither a
// number nor a name, a quantity Kubernetes cannot parse).

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

// intOrString is the API's IntOrString (ports, maxSurge, minAvailable):
// a YAML integer or string, nothing else.
type intOrString struct {
	IntVal int
	StrVal string
	IsStr  bool
}

func (v *intOrString) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want an integer or a string", n.Line)
	}
	switch n.ShortTag() {
	case "!!int":
		i, err := strconv.Atoi(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %v", n.Line, err)
		}
		v.IntVal = i
	case "!!str":
		v.StrVal, v.IsStr = n.Value, true
	default:
		return fmt.Errorf("line %d: %s %q: want an integer or a string", n.Line, n.ShortTag(), n.Value)
	}
	return nil
}

func (v intOrString) String() string {
	if v.IsStr {
		return v.StrVal
	}
	return strconv.Itoa(v.IntVal)
}

// isZero: 0, "0" or "0%".
func (v intOrString) isZero() bool {
	return !v.IsStr && v.IntVal == 0 || v.IsStr && (v.StrVal == "0" || v.StrVal == "0%")
}

// quantity is the API's resource.Quantity: a number with an optional
// binary (Ki, Mi, Gi…), decimal (m, k, M, G…) or exponent suffix.
type quantity struct {
	s     string
	value float64 // in the unit itself: bytes, cores
}

var quantityRE = regexp.MustCompile(`^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?\d+)?$`)

func parseQuantity(s string) (quantity, error) {
	m := quantityRE.FindStringSubmatch(s)
	if m == nil {
		return quantity{}, fmt.Errorf("%q is not a Kubernetes quantity", s)
	}
	n, _ := strconv.ParseFloat(m[1], 64)
	mult := map[string]float64{
		"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
		"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60,
	}
	f, ok := mult[m[2]]
	if !ok {
		e, _ := strconv.Atoi(m[2][1:])
		f = 1
		for ; e > 0; e-- {
			f *= 10
		}
		for ; e < 0; e++ {
			f /= 10
		}
	}
	return quantity{s: s, value: n * f}, nil
}

func (q *quantity) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" && n.ShortTag() != "!!int" && n.ShortTag() != "!!float" {
		return fmt.Errorf("line %d: want a quantity", n.Line)
	}
	v, err := parseQuantity(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	*q = v
	return nil
}

func (q quantity) String() string { return q.s }

type labelSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

// matches: every label the selector names, the labels have.
func (s labelSelector) matches(labels map[string]string) bool {
	if len(s.MatchLabels) == 0 {
		return false // an empty selector is refused by workloads, and selects all elsewhere: not meant here
	}
	for k, v := range s.MatchLabels {
		if labels[k] != v {
			return false
		}
	}
	return true
}

type namespace struct {
	object `yaml:",inline"`
}

type serviceAccount struct {
	object                       `yaml:",inline"`
	AutomountServiceAccountToken *bool `yaml:"automountServiceAccountToken"`
}

type configMap struct {
	object `yaml:",inline"`
	Data   map[string]string `yaml:"data"`
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

type podTemplate struct {
	Metadata objectMeta `yaml:"metadata"`
	Spec     podSpec    `yaml:"spec"`
}

type seccompProfile struct {
	Type string `yaml:"type"`
}

type podSpec struct {
	ServiceAccountName            string       `yaml:"serviceAccountName"`
	AutomountServiceAccountToken  *bool        `yaml:"automountServiceAccountToken"`
	TerminationGracePeriodSeconds *int64       `yaml:"terminationGracePeriodSeconds"`
	Tolerations                   []toleration `yaml:"tolerations"`
	SecurityContext               struct {
		RunAsUser      *int64          `yaml:"runAsUser"`
		RunAsGroup     *int64          `yaml:"runAsGroup"`
		RunAsNonRoot   *bool           `yaml:"runAsNonRoot"`
		SeccompProfile *seccompProfile `yaml:"seccompProfile"`
	} `yaml:"securityContext"`
	Containers []container `yaml:"containers"`
	Volumes    []volume    `yaml:"volumes"`
}

type volume struct {
	Name      string `yaml:"name"`
	ConfigMap *struct {
		Name string `yaml:"name"`
	} `yaml:"configMap"`
	HostPath *struct {
		Path string `yaml:"path"`
		Type string `yaml:"type"`
	} `yaml:"hostPath"`
	EmptyDir *struct {
		Medium    string    `yaml:"medium"`
		SizeLimit *quantity `yaml:"sizeLimit"`
	} `yaml:"emptyDir"`
	PersistentVolumeClaim *struct {
		ClaimName string `yaml:"claimName"`
		ReadOnly  bool   `yaml:"readOnly"`
	} `yaml:"persistentVolumeClaim"`
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
		Requests map[string]quantity `yaml:"requests"`
		Limits   map[string]quantity `yaml:"limits"`
	} `yaml:"resources"`
	SecurityContext struct {
		RunAsUser                *int64 `yaml:"runAsUser"`
		RunAsGroup               *int64 `yaml:"runAsGroup"`
		RunAsNonRoot             *bool  `yaml:"runAsNonRoot"`
		ReadOnlyRootFilesystem   *bool  `yaml:"readOnlyRootFilesystem"`
		AllowPrivilegeEscalation *bool  `yaml:"allowPrivilegeEscalation"`
		Capabilities             struct {
			Add  []string `yaml:"add"`
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
		SeccompProfile *seccompProfile `yaml:"seccompProfile"`
	} `yaml:"securityContext"`
	VolumeMounts []volumeMount `yaml:"volumeMounts"`
}

type probe struct {
	HTTPGet struct {
		Path string      `yaml:"path"`
		Port intOrString `yaml:"port"`
	} `yaml:"httpGet"`
	InitialDelaySeconds int32 `yaml:"initialDelaySeconds"`
	PeriodSeconds       int32 `yaml:"periodSeconds"`
	TimeoutSeconds      int32 `yaml:"timeoutSeconds"`
	FailureThreshold    int32 `yaml:"failureThreshold"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
	ReadOnly  bool   `yaml:"readOnly"`
}

// rolloutStrategy is a DaemonSet's updateStrategy and a Deployment's
// strategy: the two have the same fields.
type rolloutStrategy struct {
	Type          string `yaml:"type"`
	RollingUpdate struct {
		MaxUnavailable *intOrString `yaml:"maxUnavailable"`
		MaxSurge       *intOrString `yaml:"maxSurge"`
	} `yaml:"rollingUpdate"`
}

type daemonSet struct {
	object `yaml:",inline"`
	Spec   struct {
		Selector       labelSelector   `yaml:"selector"`
		UpdateStrategy rolloutStrategy `yaml:"updateStrategy"`
		Template       podTemplate     `yaml:"template"`
	} `yaml:"spec"`
}

type deployment struct {
	object `yaml:",inline"`
	Spec   struct {
		Replicas *int32          `yaml:"replicas"`
		Selector labelSelector   `yaml:"selector"`
		Strategy rolloutStrategy `yaml:"strategy"`
		Template podTemplate     `yaml:"template"`
	} `yaml:"spec"`
}

type service struct {
	object `yaml:",inline"`
	Spec   struct {
		Type     string            `yaml:"type"`
		Selector map[string]string `yaml:"selector"`
		Ports    []struct {
			Name       string      `yaml:"name"`
			Port       int32       `yaml:"port"`
			TargetPort intOrString `yaml:"targetPort"`
			Protocol   string      `yaml:"protocol"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

type podDisruptionBudget struct {
	object `yaml:",inline"`
	Spec   struct {
		MinAvailable   *intOrString  `yaml:"minAvailable"`
		MaxUnavailable *intOrString  `yaml:"maxUnavailable"`
		Selector       labelSelector `yaml:"selector"`
	} `yaml:"spec"`
}

type networkPolicyPort struct {
	Port     intOrString `yaml:"port"`
	Protocol string      `yaml:"protocol"`
}

type networkPolicy struct {
	object `yaml:",inline"`
	Spec   struct {
		PodSelector labelSelector `yaml:"podSelector"`
		PolicyTypes []string      `yaml:"policyTypes"`
		Ingress     []struct {
			From []struct {
				PodSelector       *labelSelector `yaml:"podSelector"`
				NamespaceSelector *labelSelector `yaml:"namespaceSelector"`
			} `yaml:"from"`
			Ports []networkPolicyPort `yaml:"ports"`
		} `yaml:"ingress"`
	} `yaml:"spec"`
}

// An objectKind is an object the manifests may hold: the apiVersion the
// API serves it under, a new value to decode it into and, for the kinds
// the tests check (one object of each), where readKube keeps it.
type objectKind struct {
	apiVersion string
	new        func() any
	keep       func(kb *kube, v any) // nil: the tests do not check it
}

// kindOf is the kind of T; field, when not nil, is where kube keeps it.
func kindOf[T any](apiVersion string, field func(kb *kube) *T) objectKind {
	k := objectKind{apiVersion: apiVersion, new: func() any { return new(T) }}
	if field != nil {
		k.keep = func(kb *kube, v any) { *field(kb) = *v.(*T) }
	}
	return k
}

var kinds = map[string]objectKind{
	"Namespace":           kindOf("v1", func(kb *kube) *namespace { return &kb.ns }),
	"ServiceAccount":      kindOf("v1", func(kb *kube) *serviceAccount { return &kb.sa }),
	"ConfigMap":           kindOf[configMap]("v1", nil),
	"Service":             kindOf("v1", func(kb *kube) *service { return &kb.svc }),
	"DaemonSet":           kindOf("apps/v1", func(kb *kube) *daemonSet { return &kb.ds }),
	"Deployment":          kindOf("apps/v1", func(kb *kube) *deployment { return &kb.gw }),
	"PodDisruptionBudget": kindOf("policy/v1", func(kb *kube) *podDisruptionBudget { return &kb.pdb }),
	"NetworkPolicy":       kindOf("networking.k8s.io/v1", func(kb *kube) *networkPolicy { return &kb.np }),
}

// strict decodes one YAML document into v, refusing unknown keys.
func strict(src []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// decodeObjects decodes every document of a manifest (a file, or what
// kustomize builds) strictly into its kind's type.
func decodeObjects(src []byte) ([]object, []any, error) {
	var objs []object
	var vals []any
	dec := yaml.NewDecoder(bytes.NewReader(src))
	for {
		var node yaml.Node
		if err := dec.Decode(&node); errors.Is(err, io.EOF) {
			return objs, vals, nil
		} else if err != nil {
			return nil, nil, err
		}
		doc, err := yaml.Marshal(&node)
		if err != nil {
			return nil, nil, err
		}
		var o object
		if err := yaml.Unmarshal(doc, &o); err != nil {
			return nil, nil, err
		}
		k, ok := kinds[o.Kind]
		if !ok {
			return nil, nil, fmt.Errorf("line %d: a %q, which the test does not know: add its type", node.Line, o.Kind)
		}
		if o.APIVersion != k.apiVersion {
			return nil, nil, fmt.Errorf("%s %s: apiVersion %q, want %q", o.Kind, o.Metadata.Name, o.APIVersion, k.apiVersion)
		}
		v := k.new()
		if err := strict(doc, v); err != nil {
			return nil, nil, fmt.Errorf("%s %s: %v", o.Kind, o.Metadata.Name, err)
		}
		objs, vals = append(objs, o), append(vals, v)
	}
}

// A resource is one file of the kustomization, decoded.
type resource struct {
	name string
	objs []object
	vals []any
	err  error // decodeObjects's
}

// readResources reads the kustomization and decodes each of its
// resources.
func readResources(t *testing.T) (kustomization, []resource) {
	t.Helper()
	var k kustomization
	src, err := os.ReadFile(filepath.Join(kubeDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := strict(src, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	var rs []resource
	for _, name := range k.Resources {
		src, err := os.ReadFile(filepath.Join(kubeDir, name))
		if err != nil {
			t.Fatal(err)
		}
		r := resource{name: name}
		r.objs, r.vals, r.err = decodeObjects(src)
		rs = append(rs, r)
	}
	return k, rs
}

// TestKubernetesObjectShapes decodes every manifest of the kustomization,
// and what `kubectl kustomize` builds of them when kubectl is installed,
// into the Kubernetes object types above: every key must be a field of
// its object and every value of its field's type.
func TestKubernetesObjectShapes(t *testing.T) {
	_, resources := readResources(t)
	for _, r := range resources {
		if r.err != nil {
			t.Errorf("%s: %v", r.name, r.err)
		}
		for _, o := range r.objs {
			t.Logf("%s: %s %s", r.name, o.Kind, o.Metadata.Name)
		}
	}
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Log("kubectl is not installed: the kustomization's build is not decoded")
		return
	}
	out, err := exec.Command("kubectl", "kustomize", kubeDir).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", kubeDir, err)
	}
	if _, _, err := decodeObjects(out); err != nil {
		t.Errorf("kubectl kustomize %s: %v", kubeDir, err)
	}
}

// TestKubernetesObjectShapesRefuse: the decoding refuses what the API
// server would, so that the test above means something.
func TestKubernetesObjectShapesRefuse(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(kubeDir, "gateway.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := decodeObjects(src); err != nil {
		t.Fatalf("gateway.yaml: %v", err)
	}
	for _, c := range []struct{ what, from, to string }{
		{"a misspelt field", "readinessProbe:", "readynessProbe:"},
		{"a field of another object", "terminationGracePeriodSeconds:", "gracePeriod:"},
		{"a string for a number", "replicas: 2", `replicas: "2"`},
		{"a port that is a list", "port: metrics", "port: [metrics]"},
		{"a bad quantity", "memory: 384Mi", "memory: 384MB"},
		{"a wrong apiVersion", "apiVersion: policy/v1", "apiVersion: policy/v1beta2"},
	} {
		bad := strings.Replace(string(src), c.from, c.to, 1)
		if bad == string(src) {
			t.Fatalf("%s: gateway.yaml has no %q", c.what, c.from)
		}
		if _, _, err := decodeObjects([]byte(bad)); err == nil {
			t.Errorf("%s (%s → %s) was taken", c.what, c.from, c.to)
		} else {
			t.Logf("%s: %v", c.what, err)
		}
	}
}
