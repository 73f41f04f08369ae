package lspwire

import (
	"bufio"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, err string
	}{
		{"a framed body", Frame(`{"a":1}`), `{"a":1}`, ""},
		{"two bodies, the first read", Frame("ab") + Frame("c"), "ab", ""},
		{"no header", "{}\r\n", "", "bad header line"},
		{"LF only", "Content-Length: 2\n\n{}", "", "bad header line"},
		{"no blank line", "Content-Length: 2\r\nX: y\r\n\r\n{}", "", "no blank line"},
		{"short body", "Content-Length: 5\r\n\r\n{}", "", "unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(bufio.NewReader(strings.NewReader(tc.in)))
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one saying %q", err, tc.err)
			case string(got) != tc.want:
				t.Errorf("body %q, want %q", got, tc.want)
			}
		})
	}
}
