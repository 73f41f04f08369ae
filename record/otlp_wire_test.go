package record

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestCloseFieldN checks that a field opened with k bytes for its length
// gets the shortest length, whatever the payload's size, with the bytes
// before and the payload intact.
func TestCloseFieldN(t *testing.T) {
	for _, k := range []int{1, 2, 3} {
		for _, n := range []int{0, 1, 127, 128, 16383, 16384, 1<<21 - 1, 1 << 21} {
			payload := bytes.Repeat([]byte{0xa5}, n)
			for i := range payload {
				payload[i] = byte(i * 31)
			}
			dst := []byte("before")
			dst, start := openFieldN(dst, 7, k)
			dst = append(dst, payload...)
			dst = closeFieldN(dst, start, k)
			want := protowire.AppendBytes(protowire.AppendTag([]byte("before"), 7, protowire.BytesType), payload)
			if !bytes.Equal(dst, want) {
				t.Errorf("k %d, payload of %d: %d bytes, want %d (% x…)", k, n, len(dst), len(want), dst[:min(len(dst), 12)])
			}
		}
	}
}
