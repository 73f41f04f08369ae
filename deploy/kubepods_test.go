package deploy

// The workloads run as their pods would: the node agent and the gateway
// on a root made of their mounts, their ConfigMaps' files and a
// container's log.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testnet"
)

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
	waitCheckpointed(t, r.path(w.cfg.Inputs[0].DB), testPod)
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
	waitCheckpointed(t, r.path(kb.agent.cfg.Inputs[0].DB), testPod)
	t.Cleanup(func() {
		if t.Failed() { // what the two processes said, which the receiver's count does not
			t.Logf("the gateway's output:\n%s\nthe agent's:\n%s", g.stderr.String(), a.stderr.String())
		}
	})
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

// waitProbes waits until the liveness and readiness probes of w, run at
// base, pass.
func (w *workload) waitProbes(t *testing.T, base string) {
	t.Helper()
	waitStatus(t, base+w.c.LivenessProbe.HTTPGet.Path, 200)
	waitStatus(t, base+w.c.ReadinessProbe.HTTPGet.Path, 200)
}
