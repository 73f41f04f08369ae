package output

import (
	"bytes"
	"errors"
	"io"
	"sync"
)

// A request's body is bytes the buffer reuses once their chunk is done,
// and net/http may still read a body after Do returns: RoundTripper
// closes a body when it is done with it, maybe later and in its own
// goroutine (an answer that came before the whole body was read, an
// error, a cancel), and a reader it took for a retry it then did not make
// may never be closed. So a send does not wait for the transport: it
// hands it readers it can revoke, and revokes them all as it returns.
// A write still going on then fails at its next Read, and its connection
// goes; nothing reads the bytes after the send.

// sentBodies hands out readers of one body: the first, and one for each
// time the transport or a redirect sends it again (Request.GetBody).
type sentBodies struct {
	body    []byte
	mu      sync.Mutex
	readers []*sentBody
	revoked bool
}

func (s *sentBodies) reader() *sentBody {
	b := &sentBody{}
	b.r.Reset(s.body)
	s.mu.Lock()
	defer s.mu.Unlock()
	b.closed = s.revoked
	s.readers = append(s.readers, b)
	return b
}

func (s *sentBodies) getBody() (io.ReadCloser, error) { return s.reader(), nil }

// revoke closes every reader handed out, and any handed out later; once
// it returns, nothing reads the body.
func (s *sentBodies) revoke() {
	s.mu.Lock()
	s.revoked = true
	readers := s.readers
	s.mu.Unlock()
	for _, b := range readers {
		b.Close()
	}
}

// sentBody reads a body until it is closed. A Read and a Close do not
// overlap: once Close returns, nothing reads the bytes.
type sentBody struct {
	mu     sync.Mutex
	r      bytes.Reader
	closed bool
}

var errBodyClosed = errors.New("output: the request's body was let go")

func (b *sentBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, errBodyClosed
	}
	return b.r.Read(p)
}

func (b *sentBody) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return nil
}
