package urltext

import (
	"net/url"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want URL
		ok   bool
	}{
		{"https://user:pw@example.com:8443/a/b?x=1&y=2#frag", URL{Scheme: "https", User: "user", Host: "example.com", Port: 8443, HasPort: true, Path: "/a/b", Query: "x=1&y=2", Fragment: "frag"}, true},
		{"http://example.com", URL{Scheme: "http", Host: "example.com"}, true},
		{"http://[::1]:80/", URL{Scheme: "http", Host: "::1", Port: 80, HasPort: true, Path: "/"}, true},
		{"http://[::1]/", URL{Scheme: "http", Host: "::1", Path: "/"}, true},
		{"http://h:/p", URL{Scheme: "http", Host: "h", Path: "/p"}, true},
		{"mailto:a@b.c", URL{Scheme: "mailto", Path: "a@b.c"}, true},
		{"HTTP://H/%41", URL{Scheme: "HTTP", Host: "H", Path: "/%41"}, true},
		{"file:///etc/hosts", URL{Scheme: "file", Path: "/etc/hosts"}, true},
		{"http://a@b@c/", URL{Scheme: "http", User: "a@b", Host: "c", Path: "/"}, true},
		{"s://h?#", URL{Scheme: "s", Host: "h"}, true},
		{"/relative/path", URL{}, false},
		{"example.com", URL{}, false},
		{"1http://x", URL{}, false},
		{"http://h:65536/", URL{}, false},
		{"http://h:8o/", URL{}, false},
		{"http://h:1:2/", URL{}, false},
		{"http://[::1/", URL{}, false},
		{"http://[::1]x/", URL{}, false},
		{"http://h/a b", URL{}, false},
		{"http://h/%zz", URL{}, false},
		{"http://h/%4", URL{}, false},
		{"", URL{}, false},
	} {
		got, ok := Parse(tc.in)
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v", tc.in, got, ok)
		}
	}
}

func TestQuery(t *testing.T) {
	var q Query
	if !q.Init("?a=1&&b&c=x=y&=v&a=2") {
		t.Fatal("Init failed")
	}
	var got []string
	for q.Next() {
		got = append(got, q.Key()+"|"+q.Value())
	}
	if s := strings.Join(got, " "); s != "a|1 b| c|x=y |v a|2" {
		t.Errorf("pairs %s", s)
	}
	if q.Init("a=%zz") {
		t.Error("a malformed escape passed")
	}
}

// FuzzParse holds Parse to net/url where both accept a URL with an
// authority: the same host, port and decoded path.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"https://u:p@h:1/p?q#f", "http://[::1]:80/x", "a:b", "http://h/%41%2f", "x://", "http://h:0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, ok := Parse(s)
		if !ok {
			return
		}
		for _, part := range []string{u.User, u.Host, u.Path, u.Query, u.Fragment} {
			if !strings.Contains(s, part) {
				t.Fatalf("%q: part %q is not a substring", s, part)
			}
			Decode(nil, part, false) // checked: must decode
		}
		ref, err := url.Parse(s)
		if err != nil || ref.Opaque != "" || ref.Host == "" || strings.ContainsAny(s, "[]") {
			return
		}
		if ref.Hostname() != string(Decode(nil, u.Host, false)) {
			t.Errorf("%q: host %q, net/url %q", s, Decode(nil, u.Host, false), ref.Hostname())
		}
		if ref.Path != string(Decode(nil, u.Path, false)) {
			t.Errorf("%q: path %q, net/url %q", s, Decode(nil, u.Path, false), ref.Path)
		}
	})
}
