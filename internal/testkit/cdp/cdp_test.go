package cdp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testnet"
)

// serverFrame is a frame as a server sends it: not masked.
func serverFrame(fin bool, opcode byte, payload []byte) []byte {
	b := []byte{opcode}
	if fin {
		b[0] |= 0x80
	}
	switch n := len(payload); {
	case n < 126:
		b = append(b, byte(n))
	case n <= 0xffff:
		b = append(b, 126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	return append(b, payload...)
}

// readClientFrame reads one frame, which must be masked.
func readClientFrame(t *testing.T, r *bufio.Reader) (byte, []byte) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		t.Errorf("server: %v", err)
		return 0, nil
	}
	if h[1]&0x80 == 0 {
		t.Errorf("a client frame is not masked")
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		io.ReadFull(r, b[:])
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		io.ReadFull(r, b[:])
		n = binary.BigEndian.Uint64(b[:])
	}
	var mask [4]byte
	io.ReadFull(r, mask[:])
	p := make([]byte, n)
	io.ReadFull(r, p)
	for i := range p {
		p[i] ^= mask[i%4]
	}
	return h[0] & 0x0f, p
}

// TestWebSocket: the handshake, messages of every length encoding, a
// fragmented message with a ping inside (answered), and the close.
func TestWebSocket(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 70000)
	mid := bytes.Repeat([]byte("y"), 300)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Sec-WebSocket-Key")
		if r.Header.Get("Upgrade") != "websocket" || key == "" {
			http.Error(w, "not a websocket", 400)
			return
		}
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		sum := sha1.Sum([]byte(key + wsGUID))
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Accept: " + base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n")
		rw.Flush()
		// Echo one message, then send the others.
		op, p := readClientFrame(t, rw.Reader)
		if op != 1 || string(p) != "hello" {
			t.Errorf("server got %d %q", op, p)
		}
		conn.Write(serverFrame(true, 1, p))
		conn.Write(serverFrame(true, 1, mid))
		conn.Write(serverFrame(true, 1, big))
		conn.Write(serverFrame(false, 1, []byte("frag")))
		conn.Write(serverFrame(true, 9, []byte("ping!")))
		conn.Write(serverFrame(false, 0, []byte("men")))
		conn.Write(serverFrame(true, 0, []byte("ted")))
		if op, p := readClientFrame(t, rw.Reader); op != 0xA || string(p) != "ping!" {
			t.Errorf("the ping was answered with %d %q", op, p)
		}
		conn.Write(serverFrame(true, 8, []byte{0x03, 0xe8}))
		if op, _ := readClientFrame(t, rw.Reader); op != 8 {
			t.Errorf("the close was answered with opcode %d", op)
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := dialWebSocket(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/devtools/browser/x")
	if err != nil {
		t.Fatal(err)
	}
	defer c.conn.Close()
	if err := c.WriteText([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	for _, want := range [][]byte{[]byte("hello"), mid, big, []byte("fragmented")} {
		got, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("got %d bytes %.20q…, want %d bytes %.20q…", len(got), got, len(want), want)
		}
	}
	if _, err := c.ReadMessage(); err != io.EOF {
		t.Errorf("after the close: %v, want EOF", err)
	}
}

func TestWebSocketRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := dialWebSocket(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a 404 handshake: %v", err)
	}
	if _, err := dialWebSocket(ctx, "ws://"+testnet.FreeAddr(t)+"/"); err == nil {
		t.Error("dialled a closed port")
	}
}

// TestBrowser starts Chromium, when there is one, and evaluates in a page.
func TestBrowser(t *testing.T) {
	bin, err := FindChromium()
	if err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Launch(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, err := b.NewPage(ctx, 800, 600)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Navigate(ctx, "data:text/html,<p id=x>hi</p>"); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitFor(ctx, `document.getElementById("x")`); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Sum  int    `json:"sum"`
		Text string `json:"text"`
	}
	if err := p.Eval(ctx, `Promise.resolve({sum: 1 + 2, text: document.getElementById("x").textContent})`, &got); err != nil {
		t.Fatal(err)
	}
	if got.Sum != 3 || got.Text != "hi" {
		t.Errorf("got %+v", got)
	}
	if err := p.Eval(ctx, `nope()`, nil); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("an exception: %v", err)
	}
	png, err := p.Screenshot(ctx, false)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("screenshot: %v, %d bytes", err, len(png))
	}
}
