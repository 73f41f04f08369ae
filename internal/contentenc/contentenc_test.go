package contentenc

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, name := range Names() {
		e, ok := Lookup(name)
		if !ok || e.Name != name {
			t.Fatalf("Lookup(%q) = %v, %v", name, e, ok)
		}
		for _, n := range []int{0, 1, 1000, 3 << 20} {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(i / 7 % 251)
			}
			z := e.Append([]byte("keep"), src)
			if !bytes.HasPrefix(z, []byte("keep")) {
				t.Fatalf("%s: Append lost dst", name)
			}
			out, err := e.NewDecoder(int64(n)+6).Decode([]byte("prefix"), z[4:])
			if err != nil || !bytes.Equal(out, append([]byte("prefix"), src...)) {
				t.Errorf("%s, %d bytes: %d bytes back, %v", name, n, len(out), err)
			}
		}
	}
	if _, ok := Lookup("br"); ok {
		t.Error("Lookup found br")
	}
}

// TestBomb: a body that decompresses past the bound is refused.
func TestBomb(t *testing.T) {
	for _, name := range Names() {
		e, _ := Lookup(name)
		z := e.Append(nil, make([]byte, 16<<20)) // zeros: a few KiB compressed
		if len(z) > 1<<20 {
			t.Fatalf("%s: %d bytes compressed", name, len(z))
		}
		for _, max := range []int64{0, 1000, 16<<20 - 1} {
			if _, err := e.NewDecoder(max).Decode(nil, z); !errors.Is(err, ErrTooLarge) {
				t.Errorf("%s, bound %d: %v, want ErrTooLarge", name, max, err)
			}
		}
		if out, err := e.NewDecoder(16<<20).Decode(nil, z); err != nil || len(out) != 16<<20 {
			t.Errorf("%s at the bound: %d bytes, %v", name, len(out), err)
		}
	}
}

func TestGarbage(t *testing.T) {
	for _, name := range Names() {
		e, _ := Lookup(name)
		for _, src := range [][]byte{nil, []byte("not compressed"), e.Append(nil, []byte("cut short"))[:8]} {
			if out, err := e.NewDecoder(1<<20).Decode(nil, src); err == nil && len(src) > 0 {
				t.Errorf("%s of %q: %q, no error", name, src, out)
			}
		}
	}
}

// TestConcurrent: encodings and a decoder shared by goroutines (-race).
func TestConcurrent(t *testing.T) {
	for _, name := range Names() {
		e, _ := Lookup(name)
		d := e.NewDecoder(1 << 20)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 50 {
					src := []byte(fmt.Sprintf("goroutine %d body %d %s", g, i, bytes.Repeat([]byte("x"), i*10)))
					out, err := d.Decode(nil, e.Append(nil, src))
					if err != nil || !bytes.Equal(out, src) {
						t.Errorf("%s: %q, %v", name, out, err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
}

func BenchmarkAppend(b *testing.B) {
	src := bytes.Repeat([]byte(`{"key":"http.route","value":{"stringValue":"/api/v1/orders/{id}"}},`), 1000)
	for _, name := range Names() {
		e, _ := Lookup(name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			var dst []byte
			for b.Loop() {
				dst = e.Append(dst[:0], src)
			}
			b.ReportMetric(float64(len(dst))/float64(len(src)), "ratio")
		})
	}
}
