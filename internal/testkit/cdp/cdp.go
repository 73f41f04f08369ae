// Package cdp drives a headless Chromium through the DevTools protocol,
// over a WebSocket client of its own (the standard library has none): as
// much as a test needs to open a page, wait for it, evaluate JavaScript in
// it and take a screenshot. Tests use it against pages the project serves
// (the playground: cmd/policyrun's TestPlaygroundInBrowser).
package cdp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testsync"
)

var noDeadline time.Time

// FindChromium returns the path of a Chromium (or Chrome) binary: $CHROMIUM
// when set, else the first of chromium, chromium-browser, google-chrome
// and google-chrome-stable on $PATH, else Debian's /usr/bin/chromium. The
// error says what was looked for.
func FindChromium() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return exec.LookPath(p)
	}
	names := []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", nil
	}
	return "", fmt.Errorf("no chromium binary ($CHROMIUM unset, none of %s on $PATH, no /usr/bin/chromium; Debian: apt-get install chromium)",
		strings.Join(names, ", "))
}

// Browser is a headless Chromium started by Launch, with one connection
// to it.
type Browser struct {
	cmd     *exec.Cmd
	dir     string // the profile, removed by Close
	stderr  *testsync.Buffer
	conn    *wsConn
	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan response
	events  []func(Event)
	readErr error
	done    chan struct{} // the reading goroutine ended
	exited  chan struct{} // the browser process ended
}

// Event is a message of the protocol that answers no call.
type Event struct {
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	SessionID string          `json:"sessionId"`
}

type response struct {
	ID        int64           `json:"id"`
	Result    json.RawMessage `json:"result"`
	Error     *Error          `json:"error"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	SessionID string          `json:"sessionId"`
}

// Error is an error the browser answered a call with.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data"`
}

func (e *Error) Error() string {
	if e.Data != "" {
		return fmt.Sprintf("cdp: %s (%d): %s", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("cdp: %s (%d)", e.Message, e.Code)
}

// Launch starts binary headless with a fresh profile and connects to it.
// ctx bounds the start only; Close ends the browser.
func Launch(ctx context.Context, binary string, args ...string) (*Browser, error) {
	dir, err := os.MkdirTemp("", "policyrun-chromium")
	if err != nil {
		return nil, err
	}
	all := append([]string{
		"--headless", "--remote-debugging-port=0", "--user-data-dir=" + dir,
		"--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--metrics-recording-only",
		"--mute-audio", "--password-store=basic", "--use-mock-keychain",
	}, args...)
	if os.Geteuid() == 0 {
		all = append(all, "--no-sandbox") // Chromium refuses to run as root with it
	}
	all = append(all, "about:blank")
	b := &Browser{dir: dir, stderr: &testsync.Buffer{}, pending: map[int64]chan response{}, done: make(chan struct{})}
	b.cmd = exec.Command(binary, all...)
	b.cmd.Stdout = b.stderr
	b.cmd.Stderr = b.stderr
	ownGroup(b.cmd)
	if err := b.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	exited := make(chan struct{})
	go func() { b.cmd.Wait(); close(exited) }()
	b.exited = exited
	fail := func(err error) (*Browser, error) {
		kill(b.cmd)
		<-exited
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%w\nchromium's output:\n%s", err, b.stderr.String())
	}
	// Chromium writes its port and the browser's path to DevToolsActivePort
	// once it listens.
	var wsURL string
	for wsURL == "" {
		if data, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort")); err == nil {
			if lines := strings.Split(strings.TrimSpace(string(data)), "\n"); len(lines) == 2 {
				wsURL = "ws://127.0.0.1:" + strings.TrimSpace(lines[0]) + strings.TrimSpace(lines[1])
				break
			}
		}
		select {
		case <-exited:
			return fail(errors.New("cdp: chromium exited before it listened"))
		case <-ctx.Done():
			return fail(fmt.Errorf("cdp: chromium did not listen: %w", ctx.Err()))
		case <-time.After(20 * time.Millisecond):
		}
	}
	conn, err := dialWebSocket(ctx, wsURL)
	if err != nil {
		return fail(err)
	}
	b.conn = conn
	go b.read()
	return b, nil
}

// Output is what the browser wrote on stdout and stderr so far.
func (b *Browser) Output() string { return b.stderr.String() }

// OnEvent calls f, on the reading goroutine, with every event from now on.
func (b *Browser) OnEvent(f func(Event)) {
	b.mu.Lock()
	b.events = append(b.events, f)
	b.mu.Unlock()
}

func (b *Browser) read() {
	defer close(b.done)
	for {
		msg, err := b.conn.ReadMessage()
		if err != nil {
			b.mu.Lock()
			b.readErr = err
			for id, ch := range b.pending {
				close(ch)
				delete(b.pending, id)
			}
			b.mu.Unlock()
			return
		}
		var r response
		if err := json.Unmarshal(msg, &r); err != nil {
			continue
		}
		b.mu.Lock()
		if r.ID != 0 {
			if ch, ok := b.pending[r.ID]; ok {
				delete(b.pending, r.ID)
				ch <- r
			}
			b.mu.Unlock()
			continue
		}
		hooks := b.events
		b.mu.Unlock()
		for _, f := range hooks {
			f(Event{Method: r.Method, Params: r.Params, SessionID: r.SessionID})
		}
	}
}

// Call sends method with params to the target of session ("" for the
// browser) and decodes the result into result, unless it is nil.
func (b *Browser) Call(ctx context.Context, session, method string, params, result any) error {
	if params == nil {
		params = struct{}{}
	}
	ch := make(chan response, 1)
	b.mu.Lock()
	if b.readErr != nil {
		err := b.readErr
		b.mu.Unlock()
		return fmt.Errorf("cdp: the connection is closed: %w", err)
	}
	b.nextID++
	id := b.nextID
	b.pending[id] = ch
	b.mu.Unlock()
	msg, err := json.Marshal(struct {
		ID        int64  `json:"id"`
		Method    string `json:"method"`
		Params    any    `json:"params"`
		SessionID string `json:"sessionId,omitempty"`
	}{id, method, params, session})
	if err != nil {
		return err
	}
	if err := b.conn.WriteText(msg); err != nil {
		return err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return fmt.Errorf("cdp: %s: the connection closed", method)
		}
		if r.Error != nil {
			return fmt.Errorf("%s: %w", method, r.Error)
		}
		if result != nil {
			return json.Unmarshal(r.Result, result)
		}
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
		return fmt.Errorf("cdp: %s: %w", method, ctx.Err())
	}
}

// Close ends the browser (asked to close, killed after two seconds, its
// helper processes with it) and removes its profile.
func (b *Browser) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	b.Call(ctx, "", "Browser.close", nil, nil)
	select {
	case <-b.exited:
	case <-ctx.Done():
	}
	kill(b.cmd)
	<-b.exited
	b.conn.Close()
	<-b.done
	return os.RemoveAll(b.dir)
}

// Page is one tab, attached in flat mode: its calls go over the browser's
// connection with its session id.
type Page struct {
	b       *Browser
	session string
	target  string
}

// NewPage opens a tab on about:blank, width × height CSS pixels, with the
// Page and Runtime domains enabled.
func (b *Browser) NewPage(ctx context.Context, width, height int) (*Page, error) {
	var created struct {
		TargetID string `json:"targetId"`
	}
	if err := b.Call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &created); err != nil {
		return nil, err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": created.TargetID, "flatten": true}, &attached); err != nil {
		return nil, err
	}
	p := &Page{b: b, session: attached.SessionID, target: created.TargetID}
	for _, m := range []string{"Page.enable", "Runtime.enable"} {
		if err := p.Call(ctx, m, nil, nil); err != nil {
			return nil, err
		}
	}
	if err := p.Call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false,
	}, nil); err != nil {
		return nil, err
	}
	return p, nil
}

// Call is Browser.Call on the page's session.
func (p *Page) Call(ctx context.Context, method string, params, result any) error {
	return p.b.Call(ctx, p.session, method, params, result)
}

// Navigate loads url in the page; it returns once the navigation is
// committed, not when the page is done.
func (p *Page) Navigate(ctx context.Context, url string) error {
	var r struct {
		ErrorText string `json:"errorText"`
	}
	if err := p.Call(ctx, "Page.navigate", map[string]any{"url": url}, &r); err != nil {
		return err
	}
	if r.ErrorText != "" {
		return fmt.Errorf("cdp: navigate to %s: %s", url, r.ErrorText)
	}
	return nil
}

// Eval evaluates the JavaScript expression in the page, awaiting it if it
// is a promise, and decodes its value (as JSON) into result, unless nil.
// An exception is an error.
func (p *Page) Eval(ctx context.Context, expr string, result any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := p.Call(ctx, "Runtime.evaluate", map[string]any{
		"expression": expr, "returnByValue": true, "awaitPromise": true,
	}, &r)
	if err != nil {
		return err
	}
	if e := r.ExceptionDetails; e != nil {
		return fmt.Errorf("cdp: %s: %s %s", expr, e.Text, e.Exception.Description)
	}
	if result == nil || len(r.Result.Value) == 0 {
		return nil
	}
	return json.Unmarshal(r.Result.Value, result)
}

// WaitFor evaluates expr every 25ms until it is true; it returns the last
// error (an evaluation during a navigation fails) when ctx ends first.
func (p *Page) WaitFor(ctx context.Context, expr string) error {
	var last error
	for {
		var ok bool
		err := p.Eval(ctx, "!!("+expr+")", &ok)
		if err == nil && ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("cdp: waiting for %s: %w (last: %v)", expr, ctx.Err(), last)
			}
			return fmt.Errorf("cdp: waiting for %s: %w", expr, ctx.Err())
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// Screenshot is the page as a PNG, the whole of it when full.
func (p *Page) Screenshot(ctx context.Context, full bool) ([]byte, error) {
	var r struct {
		Data string `json:"data"`
	}
	if err := p.Call(ctx, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": full}, &r); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(r.Data)
}
