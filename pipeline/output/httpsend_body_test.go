package output

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testSender is an httpSender as an otlp output makes one, to url.
func testSender(t *testing.T, url string) *httpSender {
	t.Helper()
	s, err := newHTTPSender(&HTTPConfig{URL: url}, Env{}, "application/x-protobuf", 2*time.Second, 1)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// lateReader is a transport that answers at once and reads the request's
// body only later, as http.Transport may when a receiver answers before
// it has read the whole body.
type lateReader struct {
	read chan string // what the late read got: the bytes, or its error
}

func (l *lateReader) RoundTrip(req *http.Request) (*http.Response, error) {
	go func() {
		time.Sleep(20 * time.Millisecond) // after send has returned
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			l.read <- "error: " + err.Error()
			return
		}
		l.read <- string(b)
	}()
	return &http.Response{StatusCode: 400, Status: "400 Bad Request", Header: http.Header{},
		Body: io.NopCloser(strings.NewReader("refused unread")), Request: req}, nil
}

// TestSendLetsBodyGo: once send returns, nothing reads the body's bytes,
// which are the buffer's and are reused once the chunk is done: a read
// the transport makes later fails.
func TestSendLetsBodyGo(t *testing.T) {
	tr := &lateReader{read: make(chan string, 1)}
	s := testSender(t, "http://127.0.0.1:1/v1/logs")
	s.client = &http.Client{Transport: tr}
	if r := s.send(t.Context(), []byte("payload")); r.kind != permanent {
		t.Errorf("kind %v, want permanent (400)", r.kind)
	}
	if got := <-tr.read; !strings.HasPrefix(got, "error: ") {
		t.Errorf("a read after send returned got %q, want an error", got)
	}
}

// TestSendRedirects: a 307 or 308 is followed with the body (the endpoint
// moved); a 301, 302 or 303, which Go would follow with a GET and no
// body, is not: it is a refusal, not records counted as delivered.
func TestSendRedirects(t *testing.T) {
	tests := []struct {
		code int
		want outcome
	}{
		{http.StatusTemporaryRedirect, delivered},
		{http.StatusPermanentRedirect, delivered},
		{http.StatusMovedPermanently, permanent},
		{http.StatusFound, permanent},
		{http.StatusSeeOther, permanent},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.code), func(t *testing.T) {
			var got atomic.Value
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/old" {
					http.Redirect(w, r, OTLPPath, tt.code)
					return
				}
				b, _ := io.ReadAll(r.Body)
				got.Store(r.Method + " " + string(b))
			}))
			defer srv.Close()
			r := testSender(t, srv.URL+"/old").send(t.Context(), []byte("payload"))
			if r.kind != tt.want {
				t.Errorf("kind %v (%s), want %v", r.kind, r.msg, tt.want)
			}
			if g, _ := got.Load().(string); tt.want == delivered && g != "POST payload" {
				t.Errorf("the new endpoint got %q, want the POST and its body", g)
			} else if tt.want != delivered && g != "" {
				t.Errorf("the redirect was followed: %q", g)
			}
		})
	}
}

// TestSendEmptyBody: an empty body goes with Content-Length: 0, not
// chunked.
func TestSendEmptyBody(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Content-Length") + "|" + strings.Join(r.TransferEncoding, ","))
	}))
	defer srv.Close()
	if r := testSender(t, srv.URL).send(t.Context(), nil); r.kind != delivered {
		t.Fatalf("kind %v (%s)", r.kind, r.msg)
	}
	if g := got.Load(); g != "0|" {
		t.Errorf("Content-Length|Transfer-Encoding = %q, want 0 and none", g)
	}
}

// TestSendOverwriteAfter: a receiver that answers after reading a little
// leaves the transport still writing the body when send returns, and the
// caller then writes over the bytes, as the memory buffer does with a
// copy it reuses. Under the race detector, a sender that let the
// transport read on would show a race (HTTP/1 and HTTP/2, over TLS).
func TestSendOverwriteAfter(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.CopyN(io.Discard, r.Body, 10000)
			w.WriteHeader(http.StatusOK)
		}))
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		srv.EnableHTTP2 = h2
		srv.StartTLS()
		c := &HTTPConfig{URL: srv.URL}
		c.TLS.InsecureSkipVerify = true
		s, err := newHTTPSender(c, Env{}, "application/x-protobuf", 5*time.Second, 4)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				body, other := bytes.Repeat([]byte("a"), 1<<20), bytes.Repeat([]byte("b"), 1<<20)
				for range 8 {
					if r := s.send(t.Context(), body); r.kind != delivered {
						t.Errorf("HTTP/2 %v: %v (%s)", h2, r.kind, r.msg)
					}
					copy(body, other)
				}
			})
		}
		wg.Wait()
		srv.Close()
	}
}
