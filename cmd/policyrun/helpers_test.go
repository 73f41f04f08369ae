package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/otlptest"
	"github.com/policyrun/policyrun/internal/testkit/testfs"
	"github.com/policyrun/policyrun/internal/testkit/testnet"
	"github.com/policyrun/policyrun/internal/testkit/testsync"
)

// The helpers of the command's tests: running it in the process
// (runWith) or as a child process (startRun, killRuns, runToEnd), the
// files it reads, and the receivers and clients of its network tests.

// runWith runs the command with args and stdin as its input, and returns
// its exit code, stdout and stderr.
func runWith(stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// writePolicy writes src as p.policy in a new temporary directory and
// returns its path.
func writePolicy(t *testing.T, src string) string {
	t.Helper()
	return filepath.Join(writeFiles(t, map[string]string{"p.policy": src}), "p.policy")
}

// headPipeline is a pipeline config that tails a.log from its head,
// followed by rest: the filters and outputs, indented as under pipeline.
func headPipeline(rest string) string {
	return "\npipeline:\n  inputs:\n    - name: tail\n      path: a.log\n      read_from_head: true" + rest
}

// writeFiles writes files (name → content; names may have directories)
// into a new temporary directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		testfs.Write(t, filepath.Join(dir, name), src)
	}
	return dir
}

// runCLI runs the command with args and no input.
func runCLI(args ...string) (int, string, string) { return runWith("", args...) }

// withDeadline runs f and fails the test, saying what f does, if f does
// not end in time (what hangs or never ends would otherwise hold the
// test to its timeout).
func withDeadline(t *testing.T, what string, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: did not end within %v", what, d)
	}
}

// wantAll reports each of wants that got, what the test calls it, lacks.
func wantAll(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, got)
		}
	}
}

// flakyServer is a receiver on a fixed address that can be taken down and
// brought up again, and told how to misbehave meanwhile.
type flakyServer struct {
	t    *testing.T
	rc   *otlptest.Receiver
	addr string
	mode atomic.Value // string: "ok", "503", "429", "stall", "reset", "random503"
	mu   sync.Mutex
	srv  *http.Server
}

func newFlakyServer(t *testing.T) *flakyServer {
	s := &flakyServer{t: t, rc: otlptest.New(t), addr: testnet.FreeAddr(t)}
	s.mode.Store("ok")
	rng := rand.New(rand.NewPCG(7, 8))
	var rngMu sync.Mutex
	s.rc.Refuse = func(w http.ResponseWriter, r *http.Request, n int64) bool {
		switch s.mode.Load().(string) {
		case "503":
			http.Error(w, "busy", 503)
		case "random503":
			rngMu.Lock()
			refuse := rng.IntN(2) == 0
			rngMu.Unlock()
			if !refuse {
				return false
			}
			http.Error(w, "busy", 503)
		case "429":
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", 429)
		case "stall":
			io.Copy(io.Discard, r.Body)
			<-r.Context().Done() // until the client gives up
		case "reset":
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.(*net.TCPConn).SetLinger(0)
				conn.Close()
			}
		default:
			return false
		}
		return true
	}
	s.up()
	t.Cleanup(s.down)
	return s
}

func (s *flakyServer) url() string { return "http://" + s.addr }

func (s *flakyServer) up() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return
	}
	var ln net.Listener
	var err error
	for range 50 { // the port was just closed
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		s.t.Errorf("receiver up: %v", err)
		return
	}
	s.srv = &http.Server{Handler: s.rc}
	go s.srv.Serve(ln)
}

func (s *flakyServer) down() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		s.srv.Close()
		s.srv = nil
	}
}

// tailLogs is the pipeline input of the tests that write lines into
// logs/ (writeLines) while policyrun runs: the files from their heads,
// polled every 20 ms, checkpointed in tail.db. It goes under inputs:,
// and more of its settings may follow it.
const tailLogs = `
    - name: tail
      path: logs/*.log
      parser: json
      read_from_head: true
      poll_interval: 20ms
      db: tail.db`

// writeLines appends lines {"n":from} … to path in bursts of burst lines,
// pausing between them; it runs in the background, done when it is.
func writeLines(t *testing.T, path string, from, n, burst int, pause time.Duration) (done chan struct{}) {
	done = make(chan struct{})
	go func() {
		defer close(done)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			panic(err)
		}
		defer f.Close()
		w := bufio.NewWriter(f)
		for i := from; i < from+n; i++ {
			fmt.Fprintf(w, `{"n":%d,"pad":"%s"}`+"\n", i, strings.Repeat("x", 60))
			if (i-from+1)%burst == 0 {
				w.Flush()
				time.Sleep(pause)
			}
		}
		w.Flush()
	}()
	return done
}

// child is a policyrun run in the background.
type child struct {
	cmd    *exec.Cmd
	stderr *testsync.Buffer
	done   chan error
}

func startRun(t *testing.T, dir, cfg string) *child {
	t.Helper()
	c := &child{cmd: cliCommand(dir, "run", cfg), stderr: &testsync.Buffer{}, done: make(chan error, 1)}
	c.cmd.Stderr = c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		<-c.done
		c.done <- nil
	})
	return c
}

// waitListening waits for the child to accept connections at addr.
func (c *child) waitListening(t *testing.T, addr string) {
	t.Helper()
	if !testsync.Eventually(10*time.Second, func() bool { return testnet.Dialable(addr) }) {
		t.Fatalf("policyrun does not listen at %s\n%s", addr, c.stderr)
	}
}

// stop sends sig and waits for the exit, which must be clean.
func (c *child) stop(t *testing.T, sig os.Signal, within time.Duration) {
	t.Helper()
	c.cmd.Process.Signal(sig)
	c.wait(t, within)
}

// wait waits for the exit, which must be clean and come within the time.
func (c *child) wait(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case err := <-c.done:
		c.done <- err
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, c.stderr)
		}
	case <-time.After(within):
		t.Fatalf("policyrun did not exit within %v\n%s", within, c.stderr)
	}
}

func (c *child) kill() {
	c.cmd.Process.Signal(syscall.SIGKILL)
	err := <-c.done
	c.done <- err
}

// writing reports whether a thread of process pid sits in a write(2) to
// fd: an output blocked on a pipe nobody reads. It skips the test where
// /proc does not show the threads' system calls.
func writing(t *testing.T, pid, fd int) bool {
	t.Helper()
	if _, err := os.ReadFile("/proc/self/syscall"); err != nil {
		t.Skipf("no way to see a process blocked in write(2): %v", err)
	}
	want := fmt.Sprintf("%d 0x%x ", syscall.SYS_WRITE, fd)
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.HasPrefix(string(b), want) {
			return true
		}
	}
	return false
}

// metric scrapes one sample from a metrics endpoint; -1 when it cannot.
func metric(addr, sample string) int64 {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), sample+" "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

// peakRSS is the process's peak resident memory (VmHWM), or 0 where
// /proc does not say.
func peakRSS(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Logf("no peak RSS: %v", err)
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// bufferPeak polls a gauge of the metrics endpoint at addr every 50 ms
// until the function it returns is called, which returns the largest
// value seen.
func bufferPeak(addr, sample string) (stop func() int64) {
	var peak atomic.Int64
	done, polled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if v := metric(addr, sample); v > peak.Load() {
				peak.Store(v)
			}
		}
	}()
	return func() int64 {
		close(done)
		<-polled
		return peak.Load()
	}
}

// otlpClients send OTLP requests of per records, numbered from from on,
// to an otlp input: clients at once, requests each, every request sent
// again until it is answered 200, as OTLP exporters do.
type otlpClients struct {
	clients, requests, per, from int
	timeout                      time.Duration // of one attempt
	pace, backoff                time.Duration // the pause after a 200, after anything else

	acked   sync.Map     // record number → true, once its request got 200
	refused atomic.Int64 // answers 503
	sent    sync.WaitGroup
}

// start starts the clients, sending to the otlp input at listen.
func (o *otlpClients) start(listen string) {
	for cl := range o.clients {
		o.sent.Go(func() {
			hc := &http.Client{Timeout: o.timeout}
			for i := range o.requests {
				from := o.from + (cl*o.requests+i)*o.per
				body := otlptest.Request(from, o.per)
				for {
					code, _, _, err := post(hc, "http://"+listen+"/v1/logs", "application/x-protobuf", "", body, false)
					if err == nil && code == 503 {
						o.refused.Add(1)
					}
					if err == nil && code == 200 {
						for k := from; k < from+o.per; k++ {
							o.acked.Store(k, true)
						}
						time.Sleep(o.pace)
						break
					}
					time.Sleep(o.backoff)
				}
			}
		})
	}
}

// post sends body to url as ct (and ce, when not "", its
// Content-Encoding; chunked: without a Content-Length) and returns the
// answer's status, headers and body.
func post(hc *http.Client, url, ct, ce string, body []byte, chunked bool) (int, http.Header, []byte, error) {
	var r io.Reader = bytes.NewReader(body)
	if chunked {
		r = bufio.NewReader(r) // not a type http.NewRequest takes the length of
	}
	req, err := http.NewRequest("POST", url, r)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", ct)
	if ce != "" {
		req.Header.Set("Content-Encoding", ce)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

// killRuns starts policyrun run --quiet cfg in dir kills times, killing
// each with SIGKILL once it reads its input (it holds open the file input
// or one under it), after least and up to 250 ms more (rng).
// Killed after a fixed time instead, the runs of a loaded machine died
// before they had read anything, and the kills tested nothing.
func killRuns(t *testing.T, dir, cfg, input string, kills int, rng *rand.Rand, least time.Duration) {
	t.Helper()
	if real, err := filepath.EvalSymlinks(input); err == nil {
		input = real // as /proc shows it
	}
	for range kills {
		cmd := cliCommand(dir, "run", "--quiet", cfg)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if !testsync.Eventually(30*time.Second, func() bool { return holdsOpen(t, cmd.Process.Pid, input) }) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("policyrun run %s did not open %s within 30s", cfg, input)
		}
		time.Sleep(least + time.Duration(rng.IntN(250))*time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
}

// holdsOpen reports whether process pid has the file path, or one under
// it, open. It skips the test where /proc does not show a process's
// files.
func holdsOpen(t *testing.T, pid int, path string) bool {
	t.Helper()
	if _, err := os.Readlink("/proc/self/fd/0"); err != nil {
		t.Skipf("no way to see the files a process holds open: %v", err)
	}
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if f, err := os.Readlink(fd); err == nil && (f == path || strings.HasPrefix(f, path+"/")) {
			return true
		}
	}
	return false
}

// runToEnd runs policyrun run --quiet cfg in dir, which must end cleanly
// within the time.
func runToEnd(t *testing.T, dir, cfg string, within time.Duration) {
	t.Helper()
	cmd := cliCommand(dir, "run", "--quiet", cfg)
	var out testsync.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run %s: %v\n%s", cfg, err, &out)
		}
	case <-time.After(within):
		cmd.Process.Kill()
		t.Fatalf("run %s did not end within %v\n%s", cfg, within, &out)
	}
}

// lostAndRepeated counts, of the records written (the keys of times, each
// the times it arrived), those that never arrived and the extra copies
// of the others.
func lostAndRepeated[K comparable](times map[K]int) (lost, dups int) {
	for _, n := range times {
		switch {
		case n == 0:
			lost++
		case n > 1:
			dups += n - 1
		}
	}
	return lost, dups
}
