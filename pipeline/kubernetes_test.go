package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/pipeline/tail"
	"github.com/policyrun/policyrun/record"
)

const cid = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestKubernetesFromPath(t *testing.T) {
	tests := []struct {
		path, resolved string
		want           kubeMeta
		ok             bool
	}{
		{"/var/log/containers/web-7d9f_shop_app-" + cid + ".log", "",
			kubeMeta{"web-7d9f", "shop", "app", cid, ""}, true},
		{"/var/log/containers/web-7d9f_shop_app-" + cid + ".log",
			"/var/log/pods/shop_web-7d9f_1b2c3d4e-0000-4000-8000-000000000001/app/0.log",
			kubeMeta{"web-7d9f", "shop", "app", cid, "1b2c3d4e-0000-4000-8000-000000000001"}, true},
		{"/var/log/pods/kube-system_coredns-5d78c9869d-abcde_9f8e7d6c-1111-4222-8333-444455556666/coredns/3.log", "",
			kubeMeta{"coredns-5d78c9869d-abcde", "kube-system", "coredns", "", "9f8e7d6c-1111-4222-8333-444455556666"}, true},
		// A container name with dashes and underscores in its pod.
		{"/var/log/containers/my-app-0_ns_side-car-" + cid + ".log", "",
			kubeMeta{"my-app-0", "ns", "side-car", cid, ""}, true},
		{"/var/log/app.log", "", kubeMeta{}, false},
		{"/var/log/containers/web_shop_app-notahexid.log", "", kubeMeta{}, false},
		{"/var/log/containers/web_shop-" + cid + ".log", "", kubeMeta{}, false},
	}
	for _, tt := range tests {
		got, ok := kubernetesFromPath(tt.path, tt.resolved)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s (%s): %q %v, want %q %v", tt.path, tt.resolved, got, ok, tt.want, tt.ok)
		}
	}
}

// TestKubernetesPathRecords tails a CRI log the kubelet's way — a
// containers/ link to the pods/ file — with kubernetes_path: each record
// gets the pod, namespace, container, container id and pod uid; a record
// with a kubernetes value of its own keeps it.
func TestKubernetesPathRecords(t *testing.T) {
	dir := t.TempDir()
	pods := filepath.Join(dir, "pods", "shop_web-7d9f_1b2c3d4e-0000-4000-8000-000000000001", "app")
	os.MkdirAll(pods, 0o755)
	os.MkdirAll(filepath.Join(dir, "containers"), 0o755)
	writeFile(t, pods, "0.log", "2026-12-05T00:00:00.000000000Z stdout F hello\n")
	link := filepath.Join(dir, "containers", "web-7d9f_shop_app-"+cid+".log")
	if err := os.Symlink(filepath.Join(pods, "0.log"), link); err != nil {
		t.Fatal(err)
	}
	cfg := tailConfig(t, dir, toStdout, "containers/*.log", "exit_on_eof: true", "parser: cri", "kubernetes_path: true")
	var out strings.Builder
	runPipeline(t, cfg, Options{Stdout: &out})
	want := `"kubernetes":{"pod_name":"web-7d9f","namespace_name":"shop","container_name":"app","container_id":"` + cid +
		`","pod_id":"1b2c3d4e-0000-4000-8000-000000000001"}`
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), `"log":"hello"`) {
		t.Errorf("got %s\nwant a record with %s", out.String(), want)
	}
}

// TestKubernetesKeepsOwnValues: a record with a kubernetes value of its
// own keeps it; the rest is added.
func TestKubernetesKeepsOwnValues(t *testing.T) {
	in := &input{arena: record.NewArena(), kube: kubeCache(true)}
	r, err := in.arena.DecodeJSON([]byte(`{"kubernetes":{"pod_name":"mine"}}`), record.Owned)
	if err != nil {
		t.Fatal(err)
	}
	in.addKubernetes(r, &tail.File{Path: "/var/log/containers/web_shop_app-" + cid + ".log"})
	if got, want := string(r.AppendJSON(nil)), `{"kubernetes":{"pod_name":"mine","namespace_name":"shop","container_name":"app","container_id":"`+cid+`"}}`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}
