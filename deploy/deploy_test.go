// Package deploy holds what runs policyrun as a log agent, and its tests
// (only tests: nothing here is for a program to import):
// the container image's default pipeline (image/, built by the
// Containerfile at the repository's root), the Kubernetes manifests of a
// node agent (kubernetes/) and a systemd unit (systemd/). The tests hold
// them to the code: the configs pass `policyrun run --check`, the
// manifests mount every path their config reads or writes and probe the
// port it serves, the image's build command makes a static binary that
// says its revision, and a stop fits in the time the unit and the pod
// give it. docs/deploy.md is the operator's guide.
package deploy

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/proto"

	"github.com/policyrun/policyrun/internal/testkit/testsync"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/pipeline/output"
)

// The repository's root, where the Containerfile is and the image's
// build runs.
const repoRoot = ".."

// What the image's build is given for `policyrun version` (the
// Containerfile's build arguments), and must print.
const (
	testVersion  = "v0.0.0-deploy-test"
	testRevision = "0123456789abcdef0123456789abcdef01234567"
	testTime     = "2026-12-01T10:00:00Z"
)

var tmpDir string // removed after the tests

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "policyrun-deploy-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	tmpDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var built struct {
	once sync.Once
	path string
	err  error
}

// binary is policyrun built by the Containerfile's own build command
// (buildImageBinary), once for all the tests: the configs are checked
// and run by the binary the image holds.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds policyrun as the image does (about a minute)")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the image's binary is for Linux; this is", runtime.GOOS)
	}
	built.once.Do(func() {
		built.path = filepath.Join(tmpDir, "policyrun")
		built.err = buildImageBinary(built.path)
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// A root stands for the file system a config runs in, a container's or
// a host's, made in a temporary directory: every absolute path under one
// of its prefixes (the mount points of a pod, the directories of a
// systemd unit) is made under dir, so that a config can be checked and
// run as it would be there.
type root struct {
	dir      string
	prefixes []string // longest first, so that /var/log/pods wins over /var/log
}

func newRoot(t *testing.T, prefixes ...string) *root {
	t.Helper()
	r := &root{dir: t.TempDir(), prefixes: slices.Clone(prefixes)}
	sort.Slice(r.prefixes, func(i, j int) bool { return len(r.prefixes[i]) > len(r.prefixes[j]) })
	for _, p := range r.prefixes {
		if err := os.MkdirAll(filepath.Join(r.dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// path is where p is under the root; p itself when no prefix holds it.
func (r *root) path(p string) string {
	if r.prefixOf(p) == "" {
		return p
	}
	return filepath.Join(r.dir, p)
}

func (r *root) prefixOf(p string) string {
	for _, pre := range r.prefixes {
		if p == pre || strings.HasPrefix(p, pre+"/") {
			return pre
		}
	}
	return ""
}

// remap rewrites text (a config, a command line) so that each absolute
// path under a prefix names its place under the root. A path starts
// where a '/' follows no character of a file name, and a prefix must end
// where a path element does.
func (r *root) remap(text string) string {
	nameChar := func(c byte) bool {
		return c == '.' || c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		if text[i] == '/' && (i == 0 || !nameChar(text[i-1]) && text[i-1] != '/') {
			for _, pre := range r.prefixes {
				end := i + len(pre)
				if strings.HasPrefix(text[i:], pre) && (end == len(text) || !nameChar(text[end])) {
					b.WriteString(r.dir)
					break
				}
			}
		}
		b.WriteByte(text[i])
	}
	return b.String()
}

// checkArgs is a command line that runs a pipeline (policyrun run …
// CONFIG, as a pod or a unit starts it) with --check after run.
func checkArgs(t *testing.T, args []string) []string {
	t.Helper()
	i := slices.Index(args, "run")
	if i < 0 {
		t.Fatalf("%q does not run a pipeline (no run)", args)
	}
	return slices.Concat(args[:i+1], []string{"--check"}, args[i+1:])
}

// configArg is the config file of a `policyrun run` command line: its
// last argument.
func configArg(t *testing.T, args []string) string {
	t.Helper()
	if !slices.Contains(args, "run") {
		t.Fatalf("%q: want policyrun's run command with the config last", args)
	}
	c := args[len(args)-1]
	if !filepath.IsAbs(c) {
		t.Fatalf("%q: the config %s is not an absolute path", args, c)
	}
	return c
}

// runPolicyrun runs the binary with args and returns its exit status and
// its output.
func runPolicyrun(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// mustCheck runs `policyrun run --check` as args (a pod's or a unit's
// command line, made under the root) would run the pipeline: it must
// pass.
func mustCheck(t *testing.T, bin string, args []string) {
	t.Helper()
	code, out := runPolicyrun(t, bin, checkArgs(t, args)...)
	if code != 0 || !strings.Contains(out, ": ok (") {
		t.Fatalf("policyrun %s: exit %d\n%s", strings.Join(checkArgs(t, args), " "), code, out)
	}
	t.Logf("policyrun %s:\n%s", strings.Join(checkArgs(t, args), " "), out)
}

// TestPolicyTests: the policies here (the image's, the node agent's, the
// systemd example's) pass their own tests on every backend.
func TestPolicyTests(t *testing.T) {
	bin := binary(t)
	policies, err := filepath.Glob("*/*.policy")
	if err != nil || len(policies) == 0 {
		t.Fatalf("no policies: %v", err)
	}
	for _, p := range policies {
		code, out := runPolicyrun(t, bin, "test", p)
		if code != 0 || !strings.Contains(out, " 0 failed") {
			t.Errorf("policyrun test %s: exit %d\n%s", p, code, out)
		}
	}
}

// configFiles are the files a config names, absolute (relative ones
// resolved against its directory, as the pipeline does): what it reads
// (tail patterns, policy and script files, TLS files) and what it
// writes (checkpoint files, data_dir, file outputs, dead-letter
// directories).
type configFiles struct {
	tails  []string // tail path patterns
	reads  []string
	writes []string
}

func filesOf(cfg *config.Config) configFiles {
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(cfg.Dir, p)
	}
	var f configFiles
	add := func(list *[]string, paths ...string) {
		for _, p := range paths {
			if p != "" {
				*list = append(*list, abs(p))
			}
		}
	}
	add(&f.writes, cfg.Service.DataDir)
	for _, in := range cfg.Inputs {
		add(&f.tails, in.Paths...)
		add(&f.writes, in.DB)
		add(&f.reads, in.OTLP.CertFile, in.OTLP.KeyFile, in.OTLP.ClientCAFile)
	}
	for _, fl := range cfg.Filters {
		add(&f.reads, fl.File)
	}
	for _, o := range cfg.Outputs {
		if fs, ok := o.Settings.(output.FileSettings); ok {
			add(&f.writes, fs.File())
		}
		var d *output.DeliveryConfig
		var tls *output.ClientTLS
		switch s := o.Settings.(type) {
		case *output.OTLPConfig:
			d, tls = &s.DeliveryConfig, &s.TLS
		case *output.HTTPOutputConfig:
			d, tls = &s.DeliveryConfig, &s.TLS
		}
		if d != nil {
			add(&f.writes, d.DeadLetter.Path)
		}
		if tls != nil {
			add(&f.reads, tls.CAFile, tls.CertFile, tls.KeyFile)
		}
	}
	return f
}

// literalDir is the part of a glob pattern before its first element with
// a wildcard: the directory that must be there for it to match.
func literalDir(pattern string) string {
	dir := filepath.Dir(pattern)
	for strings.ContainsAny(dir, `*?[\`) {
		dir = filepath.Dir(dir)
	}
	return dir
}

// loadConfig parses the config at path (a file of the repository) as
// policyrun would find it at as (where the pod or the unit has it), so
// that relative paths resolve as they would there.
func loadConfig(t *testing.T, path, as string) *config.Config {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(as, src)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cfg
}

// setScalars sets, in the YAML file, each scalar at a path (mapping
// keys joined by dots; a sequence on the way is searched element by
// element) to the value after the path, as in
// setScalars(t, file, "service.metrics", "127.0.0.1:0"). It fails the
// test when a path finds none.
func setScalars(t *testing.T, file string, sets ...string) {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(sets); i += 2 {
		path, value := strings.Split(sets[i], "."), sets[i+1]
		n := 0
		var walk func(node *yaml.Node, path []string)
		walk = func(node *yaml.Node, path []string) {
			switch {
			case node.Kind == yaml.DocumentNode || node.Kind == yaml.SequenceNode:
				for _, c := range node.Content {
					walk(c, path)
				}
			case len(path) == 0 && node.Kind == yaml.ScalarNode:
				node.Value, node.Tag, node.Style = value, "!!str", 0
				n++
			case len(path) > 0 && node.Kind == yaml.MappingNode:
				for i := 0; i+1 < len(node.Content); i += 2 {
					if node.Content[i].Value == path[0] {
						walk(node.Content[i+1], path[1:])
					}
				}
			}
		}
		walk(&doc, path)
		if n == 0 {
			t.Fatalf("the config has no %s", sets[i])
		}
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// An agent is a `policyrun run` process of a test.
type agent struct {
	cmd    *exec.Cmd
	stderr testsync.Buffer
	done   chan struct{}
	err    error // once done
}

func startAgent(t *testing.T, bin string, args ...string) *agent {
	t.Helper()
	a := &agent{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	a.cmd.Stderr = &a.stderr
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		a.err = a.cmd.Wait()
		close(a.done)
	}()
	t.Cleanup(func() {
		select {
		case <-a.done:
		default:
			a.cmd.Process.Kill()
			<-a.done
		}
	})
	return a
}

var metricsLine = regexp.MustCompile(`metrics at http://(\S+)/metrics`)

// metricsAddr waits for the agent to say where its metrics listener is.
func (a *agent) metricsAddr(t *testing.T) string {
	t.Helper()
	addr, ok := a.waitMetricsAddr(t)
	if !ok {
		t.Fatalf("the agent ended: %v\n%s", a.err, a.stderr.String())
	}
	return addr
}

// waitMetricsAddr waits for the agent to say where its metrics listener
// is, or to end (ok false).
func (a *agent) waitMetricsAddr(t *testing.T) (addr string, ok bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m := metricsLine.FindStringSubmatch(a.stderr.String()); m != nil {
			return m[1], true
		}
		select {
		case <-a.done:
			return "", false
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("the agent did not say where its metrics are within 60s:\n%s", a.stderr.String())
	return "", false
}

// waitStatus waits until GET url answers want.
func waitStatus(t *testing.T, url string, want int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == want {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("GET %s: want %d, last answer %s", url, want, last)
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
	t.Fatalf("the output's buffer never held the line within 60s:\n%s", get(t, base+"/metrics"))
}

// waitCheckpointed waits until an agent's checkpoint file db names a
// file (name, part of its path): its tail has found the file and decided
// where to read it from. A fresh agent reads what its first scan finds
// from its end (the configs have no read_from_head), so a line a test
// appended before then, as they did once the agent was ready (which its
// tail's first scan follows), was skipped on a loaded machine: "the
// receiver has 0 records, want 3", "the output's buffer never held the
// line" with policyrun_records_in_total 0.
func waitCheckpointed(t *testing.T, db, name string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(db); err == nil && bytes.Contains(b, []byte(name)) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the agent's checkpoint %s did not name %s within 60s", db, name)
}

// get is the body of GET url.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stop sends sig and waits for the process to end, within limit; it
// returns how long the stop took.
func (a *agent) stop(t *testing.T, sig os.Signal, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	if err := a.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.done:
	case <-time.After(limit):
		t.Fatalf("the agent did not stop within %v of %v:\n%s", limit, sig, a.stderr.String())
	}
	took := time.Since(start)
	if a.err != nil {
		t.Fatalf("the agent's stop: %v\n%s", a.err, a.stderr.String())
	}
	return took
}

// A receiver is an OTLP/HTTP logs endpoint that keeps what it is sent.
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	records []received
}

// received is one LogRecord: its body and its string attributes.
type received struct {
	body  string
	attrs map[string]string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		// An ExportLogsServiceRequest is a LogsData on the wire.
		raw, err := io.ReadAll(body)
		var msg logspb.LogsData
		if err == nil {
			err = proto.Unmarshal(raw, &msg)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rl := range msg.ResourceLogs {
			for _, sl := range rl.ScopeLogs {
				for _, lr := range sl.LogRecords {
					rec := received{body: lr.Body.GetStringValue(), attrs: map[string]string{}}
					for _, kv := range lr.Attributes {
						rec.attrs[kv.Key] = kv.Value.GetStringValue()
					}
					r.records = append(r.records, rec)
				}
			}
		}
		r.mu.Unlock()
		// An empty ExportLogsServiceResponse: everything taken.
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// waitFor waits until the receiver holds n records, and returns them.
func (r *receiver) waitFor(t *testing.T, n int) []received {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r.mu.Lock()
		got := slices.Clone(r.records)
		r.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			if len(got) < n {
				t.Fatalf("the receiver has %d records, want %d: %+v", len(got), n, got)
			}
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
}
