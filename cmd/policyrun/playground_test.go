package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/cdp"
	"github.com/policyrun/policyrun/playground"
)

// startPlayground serves the playground on 127.0.0.1 until the test ends
// and returns its URL.
func startPlayground(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- servePlayground(ctx, "127.0.0.1:0", func(a net.Addr) { addrs <- a }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("servePlayground: %v", err)
		}
	})
	select {
	case a := <-addrs:
		return "http://" + displayAddr(a) + "/"
	case err := <-done:
		t.Fatalf("servePlayground: %v", err)
	}
	return ""
}

func TestPlaygroundServes(t *testing.T) {
	base := startPlayground(t)
	for _, c := range []struct{ path, has string }{
		{"", `id="policy"`},
		{"playground.js", "policyrunRun"},
		{"wasm_exec.js", "globalThis.Go"},
		{"playground.wasm", "\x00asm"},
	} {
		resp, err := http.Get(base + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body) // the client asks for gzip and decompresses
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(body, []byte(c.has)) {
			t.Errorf("GET /%s: %s, %d bytes, no %q", c.path, resp.Status, len(body), c.has)
		}
	}
}

func TestPlaygroundFlags(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"playground", "extra"}, nil, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage: policyrun playground") {
		t.Errorf("an argument: exit %d\n%s", code, &stderr)
	}
	stderr.Reset()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if code := run([]string{"playground", "--listen", ln.Addr().String()}, nil, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "policyrun playground:") {
		t.Errorf("an address in use: exit %d\n%s", code, &stderr)
	}
	for addr, want := range map[string]string{
		"[::]:8080":      "localhost:8080",
		"0.0.0.0:80":     "localhost:80",
		"127.0.0.1:8080": "127.0.0.1:8080",
		"[::1]:8080":     "[::1]:8080",
	} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := displayAddr(a); got != want {
			t.Errorf("displayAddr(%s) = %s, want %s", addr, got, want)
		}
	}
}

// shareLink is the page's link for policy and input.
func shareLink(base, policySrc, input string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return base + "#policy=" + enc([]byte(policySrc)) + "&input=" + enc([]byte(input))
}

// pageState is what the test reads off the page.
type pageState struct {
	State       string   `json:"state"`
	Runs        int      `json:"runs"`
	Status      string   `json:"status"`
	Output      string   `json:"output"`
	Summary     string   `json:"summary"`
	Codes       []string `json:"codes"`
	Diagnostics []string `json:"diagnostics"`
	Outcomes    []string `json:"outcomes"`
	Share       string   `json:"share"`
	InputLabel  string   `json:"inputLabel"`
}

const readPage = `(() => {
  const $ = (id) => document.getElementById(id);
  const items = [...document.querySelectorAll("#diagnostics li[data-code]")];
  return {
    state: document.body.dataset.state,
    runs: Number(document.body.dataset.runs),
    status: $("status").textContent,
    output: $("output").textContent,
    summary: $("summary").textContent,
    codes: items.map((li) => li.dataset.code),
    diagnostics: items.map((li) => li.textContent),
    outcomes: [...document.querySelectorAll("#records tbody tr")].map((tr) => tr.cells[1].textContent),
    share: $("share").value,
    inputLabel: $("input-label").textContent,
  };
})()`

// TestPlaygroundInBrowser serves the playground and opens it in headless
// Chromium: a shared link shows the policy's output (the same as Run's,
// natively), a broken policy its diagnostic's code and position, an OTLP
// policy runs over views, and an edit in the editor runs again. Set
// POLICYRUN_PLAYGROUND_SCREENSHOTS to a directory to keep screenshots.
func TestPlaygroundInBrowser(t *testing.T) {
	bin, err := cdp.FindChromium()
	if err != nil {
		t.Skip(err)
	}
	base := startPlayground(t)
	// Each step waits with a deadline of its own (waitRun's). One of
	// 60 s for the whole test, some twenty page loads and runs, was used
	// up by a loaded machine (51 s at load 17); ctx ends instead shortly
	// before the test binary's -timeout, so that a browser that hangs
	// fails this test with what it shows rather than the binary.
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
		defer cancel()
	}
	b, err := cdp.Launch(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var mu sync.Mutex
	var console []string // the page's exceptions and console, for failures
	b.OnEvent(func(e cdp.Event) {
		if e.Method == "Runtime.exceptionThrown" || e.Method == "Runtime.consoleAPICalled" {
			mu.Lock()
			console = append(console, e.Method+" "+string(e.Params))
			mu.Unlock()
		}
	})
	p, err := b.NewPage(ctx, 1400, 1000)
	if err != nil {
		t.Fatal(err)
	}
	shots := os.Getenv("POLICYRUN_PLAYGROUND_SCREENSHOTS")
	// open loads url afresh and waits for the page's first run.
	open := func(name, url string) pageState {
		t.Helper()
		if err := p.Navigate(ctx, "about:blank"); err != nil {
			t.Fatal(err)
		}
		if err := p.Navigate(ctx, url); err != nil {
			t.Fatal(err)
		}
		return waitRun(ctx, t, p, 1, name, shots, func() string {
			mu.Lock()
			defer mu.Unlock()
			return strings.Join(console, "\n") + "\n" + b.Output()
		})
	}

	// A shared link: the output is Run's, computed natively.
	policySrc := "# é: the link carries UTF-8\npolicy \"shared\"\n\nschema {\n  level: string\n  status: int?\n  ...\n}\n\n" +
		"drop when .level == \"debug\"\nset .service = \"checkout\"\nif (.status ?? 0) >= 500 {\n  set .alert = true\n}\n"
	input := "{\"level\":\"debug\"}\n{\"level\":\"info\",\"status\":200}\n{\"level\":\"error\",\"status\":503}\n{\"level\":\"info\",\"status\":\"x\"}\n"
	link := shareLink(base, policySrc, input)
	st := open("shared", link)
	want := playground.Run(policySrc, input)
	wantOutput := `{"level":"info","status":200,"service":"checkout"}` + "\n" +
		`{"level":"error","status":503,"service":"checkout","alert":true}` + "\n" +
		`{"level":"info","status":"x"}`
	if strings.Join(want.Output, "\n") != wantOutput {
		t.Fatalf("Run's output:\n%s\nwant\n%s", strings.Join(want.Output, "\n"), wantOutput)
	}
	if st.State != "ran" || st.Output != wantOutput || st.Summary != want.Summary || len(st.Codes) != 0 {
		t.Errorf("the shared link shows %+v\nwant the output\n%s\nand the summary %q", st, wantOutput, want.Summary)
	}
	if got := strings.Join(st.Outcomes, "|"); got != "dropped|kept|kept|fault type_mismatch, kept as it came" {
		t.Errorf("the outcomes are %s", got)
	}
	if st.Share != link {
		t.Errorf("the page's share link is\n%s\nnot the link it was opened with\n%s", st.Share, link)
	}
	// The same link with its base64 padded and the padding
	// percent-encoded (%3D), as many tools write it: the same page. It was
	// ignored without a word, and the example shown.
	enc := base64.URLEncoding.EncodeToString
	padded := base + "#policy=" + strings.ReplaceAll(enc([]byte(policySrc)), "=", "%3D") +
		"&input=" + strings.ReplaceAll(enc([]byte(input)), "=", "%3D")
	if !strings.Contains(padded, "%3D") {
		t.Fatal("the test's link has no padding")
	}
	if st := open("padded", padded); st.Output != wantOutput {
		t.Errorf("the padded link shows %+v", st)
	}
	// A link that cannot be read says so, and shows the example.
	if st := open("bad link", base+"#policy=%%%&input="); !strings.Contains(st.Status, "cannot be read") {
		t.Errorf("a bad link's status is %q", st.Status)
	}
	open("shared again", link)

	// An edit runs again: the output and the share link follow it.
	if err := p.Eval(ctx, `(() => { const e = document.getElementById("input");
		e.value = '{"level":"warn","status":500}'; e.dispatchEvent(new Event("input")); })()`, nil); err != nil {
		t.Fatal(err)
	}
	st = waitRun(ctx, t, p, 2, "edited", shots, b.Output)
	if want := `{"level":"warn","status":500,"service":"checkout","alert":true}`; st.Output != want || st.Summary != "1 in, 1 out, 0 dropped, 0 faulted" {
		t.Errorf("after the edit: output %q, summary %q; want %q", st.Output, st.Summary, want)
	}
	if want := shareLink(base, policySrc, `{"level":"warn","status":500}`); st.Share != want {
		t.Errorf("after the edit the share link is\n%s\nwant\n%s", st.Share, want)
	}
	var hash string
	if err := p.Eval(ctx, `location.hash`, &hash); err != nil || !strings.HasSuffix(st.Share, hash) {
		t.Errorf("the address bar's fragment %q is not the share link's (%v)", hash, err)
	}

	// A broken policy: its diagnostic's code and position, and no output.
	broken := "policy \"checkout\"\n\nschema {\n  status: int\n  ...\n}\n\ndrop when .status == \"500\"\n"
	st = open("broken", shareLink(base, broken, "{\"status\":500}\n"))
	if st.State != "errors" || len(st.Codes) != 1 || st.Codes[0] != "E0301" || st.Output != "" {
		t.Fatalf("the broken policy shows %+v", st)
	}
	for _, s := range []string{"error", "E0301", "8:11", "cannot compare int with string", "compare with the number 500"} {
		if !strings.Contains(st.Diagnostics[0], s) {
			t.Errorf("the diagnostic %q has no %q", st.Diagnostics[0], s)
		}
	}

	// An OTLP policy reads its input lines as views.
	otlpPolicy := "policy \"o\"\nschema otlp {\n  attributes: { \"http.status\": int?, ... }\n}\n" +
		"drop when .severity_number < 9\nset .attributes.seen = true\n"
	otlpInput := "{\"severity_number\":5}\n{\"severity_number\":9,\"body\":\"hi\",\"attributes\":{\"http.status\":200}}\n"
	st = open("otlp", shareLink(base, otlpPolicy, otlpInput))
	wantOTLP := playground.Run(otlpPolicy, otlpInput)
	if st.State != "ran" || st.Output != strings.Join(wantOTLP.Output, "\n") || !strings.Contains(st.Output, `"seen":true`) || !strings.Contains(st.InputLabel, "OTLP") {
		t.Errorf("the OTLP policy shows %+v\nwant the output %q", st, strings.Join(wantOTLP.Output, "\n"))
	}

	// A module beside the policy, and parameters: the link carries them,
	// the output is RunFiles', and a module's error names its file.
	raw := base64.RawURLEncoding.EncodeToString
	modSrc := "module \"net\"\n\nfn mask(ip: string, keep: int) string {\n  return join(slice(split(ip, \".\"), 0, keep), \".\")\n}\n"
	modPolicy := "policy \"m\"\n\nimport \"net.policy\"\n\nschema {\n  ip: string\n  ...\n}\n\nparam keep: int = 3\n\nset .ip = net.mask(.ip, keep)\n"
	modInput := "{\"ip\":\"10.1.2.3\"}\n"
	modLink := shareLink(base, modPolicy, modInput) + "&module=" + raw([]byte(modSrc)) + "&modname=" + raw([]byte("net.policy")) + "&params=" + raw([]byte("keep=2\n"))
	st = open("module", modLink)
	wantMod := playground.RunFiles(modPolicy, modInput, map[string]string{"net.policy": modSrc}, "keep=2\n")
	if st.State != "ran" || st.Output != `{"ip":"10.1"}` || st.Output != strings.Join(wantMod.Output, "\n") || st.Share != modLink {
		t.Errorf("the module's link shows %+v, want the output %q", st, strings.Join(wantMod.Output, "\n"))
	}
	badMod := strings.Replace(modSrc, "string {", "int {", 1)
	st = open("module error", shareLink(base, modPolicy, modInput)+"&module="+raw([]byte(badMod))+"&modname="+raw([]byte("net.policy")))
	if st.State != "errors" || len(st.Codes) != 1 || st.Codes[0] != "E0605" || !strings.Contains(st.Diagnostics[0], "net.policy:4:") {
		t.Errorf("the broken module shows %+v", st)
	}

	// The page with no fragment runs its first example.
	st = open("default", base)
	if st.State != "ran" || !strings.Contains(st.Output, `"service":"checkout"`) {
		t.Errorf("the page without a link shows %+v", st)
	}

	// Every example of the menu runs, but the one that shows an error; each
	// checks cleanly but that one.
	var names []string
	if err := p.Eval(ctx, `[...document.querySelectorAll("#example option:not([disabled])")].map((o) => o.textContent)`, &names); err != nil {
		t.Fatal(err)
	}
	if len(names) < 4 {
		t.Fatalf("the example menu has %q", names)
	}
	runs := st.Runs
	for i, name := range names {
		if err := p.Eval(ctx, fmt.Sprintf(`(() => { const s = document.getElementById("example");
			s.value = "%d"; s.dispatchEvent(new Event("change")); })()`, i), nil); err != nil {
			t.Fatal(err)
		}
		runs++
		st = waitRun(ctx, t, p, runs, fmt.Sprintf("example-%d", i), shots, b.Output)
		wantErrors := strings.Contains(name, "error")
		switch {
		case wantErrors && (st.State != "errors" || len(st.Codes) != 1 || !strings.Contains(name, st.Codes[0])):
			t.Errorf("example %q shows %s %v, want the error its name says", name, st.State, st.Codes)
		case !wantErrors && (st.State != "ran" || len(st.Codes) != 0 || st.Output == ""):
			t.Errorf("example %q shows %s, diagnostics %q, output %q", name, st.State, st.Diagnostics, st.Output)
		}
	}
}

// waitRun waits for the page's run number n and reads the page; a
// screenshot goes to dir when set.
func waitRun(ctx context.Context, t *testing.T, p *cdp.Page, n int, name, dir string, logs func() string) pageState {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := p.WaitFor(wctx, fmt.Sprintf(`Number(document.body?.dataset.runs) >= %d || document.body?.dataset.state === "failed"`, n)); err != nil {
		var st pageState
		p.Eval(ctx, readPage, &st)
		t.Fatalf("%s: the page did not run: %v\npage: %+v\n%s", name, err, st, logs())
	}
	var st pageState
	if err := p.Eval(ctx, readPage, &st); err != nil {
		t.Fatal(err)
	}
	if st.State == "failed" {
		t.Fatalf("%s: the page failed: %s\n%s", name, st.Status, logs())
	}
	if dir != "" {
		png, err := p.Screenshot(ctx, true)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
		}
		if err != nil {
			t.Errorf("screenshot: %v", err)
		}
	}
	if testing.Verbose() {
		b, _ := json.MarshalIndent(st, "", "  ")
		t.Logf("%s: %s", name, b)
	}
	return st
}

// TestPlaygroundMatchesEval: the playground's output and summary are
// eval's, for plain and OTLP policies, faults and malformed lines.
func TestPlaygroundMatchesEval(t *testing.T) {
	cases := []struct{ policy, input string }{
		{
			"policy \"p\"\nschema {\n  level: string\n  status: int?\n  ...\n}\ndrop when .level == \"debug\"\n" +
				"set .n = (.status ?? 0) * 2\nremove .level\n",
			"{\"level\":\"debug\"}\n{\"level\":\"info\",\"status\":21}\n\n{\"level\":3}\nnot json\n{\"level\":\"x\",\"status\":\"y\"}",
		},
		{
			"policy \"o\" on_fault drop\nschema otlp {\n  attributes: { code: int?, ... }\n}\n" +
				"set .attributes.double = (.attributes.code ?? 1) * 2\nset .severity_text = \"INFO\"\n",
			"{\"severity_number\":9,\"attributes\":{\"code\":4}}\n{\"attributes\":{\"code\":\"four\"}}\n{\"severity_number\":\"x\"}\n{\"body\":{\"k\":[1,2]}}\n",
		},
	}
	for i, c := range cases {
		dir := t.TempDir()
		file := filepath.Join(dir, "p.policy")
		if err := os.WriteFile(file, []byte(c.policy), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		if code := run([]string{"eval", "--policy", file}, strings.NewReader(c.input), &stdout, &stderr); code != 0 {
			t.Fatalf("case %d: eval exit %d\n%s", i, code, &stderr)
		}
		res := playground.Run(c.policy, c.input)
		if !res.Ran {
			t.Fatalf("case %d: %+v", i, res)
		}
		t.Logf("case %d: %s", i, res.Summary)
		if got := strings.Join(res.Output, "\n") + "\n"; got != stdout.String() {
			t.Errorf("case %d: the playground's output\n%s\neval's\n%s", i, got, &stdout)
		}
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if got, want := "eval: "+res.Summary, lines[len(lines)-1]; got != want {
			t.Errorf("case %d: the playground's summary %q, eval's %q", i, got, want)
		}
	}
}
