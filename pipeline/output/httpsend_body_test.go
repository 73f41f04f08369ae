package output

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// lateCloser is a transport that answers at once and reads and closes the
// request's body only later, as http.Transport may when a receiver answers
// before it has read the whole body (RoundTripper's contract: the body
// may be closed after RoundTrip returns).
type lateCloser struct{ closed atomic.Bool }

func (l *lateCloser) RoundTrip(req *http.Request) (*http.Response, error) {
	go func() {
		time.Sleep(50 * time.Millisecond)
		io.Copy(io.Discard, req.Body)
		l.closed.Store(true)
		req.Body.Close()
	}()
	return &http.Response{StatusCode: 400, Status: "400 Bad Request", Header: http.Header{},
		Body: io.NopCloser(strings.NewReader("refused unread")), Request: req}, nil
}

// TestSendWaitsForBody: send returns only once the transport has let the
// body go, since its bytes are the buffer's and are reused once the chunk
// is done.
func TestSendWaitsForBody(t *testing.T) {
	tr := &lateCloser{}
	s := &httpSender{url: "http://127.0.0.1:1/v1/logs", contentType: "application/x-protobuf", headers: http.Header{},
		timeout: 5 * time.Second, client: &http.Client{Transport: tr}}
	r := s.send(t.Context(), []byte("payload"))
	if r.kind != permanent {
		t.Errorf("kind %v, want permanent (400)", r.kind)
	}
	if !tr.closed.Load() {
		t.Error("send returned before the transport closed the body")
	}
}
