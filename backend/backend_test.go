package backend

import (
	"testing"
	"time"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/internal/testkit/vmtest"
	"github.com/policyrun/policyrun/luascript"
	"github.com/policyrun/policyrun/spec"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		name string
		want []string // Select's names; nil: an error
	}{
		{"vm", []string{"vm"}},
		{"lua", []string{"lua"}},
		{"all", Names()},
		{"luajit", nil},
		{"", nil},
	}
	for _, tt := range tests {
		bs, err := Select(tt.name)
		if (err != nil) != (tt.want == nil) {
			t.Errorf("Select(%q): %v", tt.name, err)
			continue
		}
		for i, b := range bs {
			if b.Name != tt.want[i] {
				t.Errorf("Select(%q)[%d] = %s", tt.name, i, b.Name)
			}
		}
		if _, err := Lookup(tt.name); (err == nil) != (len(tt.want) == 1) {
			t.Errorf("Lookup(%q): %v", tt.name, err)
		}
	}
	if Names()[0] != "vm" {
		t.Errorf("the default backend is %s", Names()[0])
	}
}

// TestLoad loads one policy on every backend with the same options and
// holds them to the same results: the clock and the limits reach each.
func TestLoad(t *testing.T) {
	src := []byte(`policy "p"
schema {
  s: string
  ...
}
drop when .s == "drop"
set .t = now()
set .u = upper(.s)
`)
	f, info, diags := compiler.CheckFile("p.policy", src)
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	opts := spec.Options{
		Clock:  spec.FixedClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)),
		Limits: spec.Limits{MaxString: 4},
	}
	tests := []struct {
		in, out string
		res     spec.Result
	}{
		{`{"s":"ab"}`, `{"s":"ab","t":"2026-03-01T00:00:00Z","u":"AB"}`, spec.Result{}},
		{`{"s":"drop"}`, ``, spec.Result{Action: spec.Drop}},
		{`{"s":"abcde"}`, `{"s":"abcde"}`, spec.Result{Fault: spec.StringTooLong}},
		{`{"s":1}`, `{"s":1}`, spec.Result{Fault: spec.TypeMismatch}},
	}
	for _, b := range All() {
		p, err := b.Load(f, info, opts)
		if err != nil {
			t.Fatalf("%s: %v", b.Name, err)
		}
		for _, tt := range tests {
			res, got, err := vmtest.RunJSON(t, p, tt.in)
			if err != nil || res != tt.res {
				t.Errorf("%s: %s: %v %v, want %v", b.Name, tt.in, res, err, tt.res)
				continue
			}
			if tt.out != "" && got != tt.out {
				t.Errorf("%s: %s: got %s, want %s", b.Name, tt.in, got, tt.out)
			}
		}
	}
}

// Every backend's program says whether its policy is an OTLP policy, as
// its schema declares; a Fluent Bit-style script never is.
func TestIsOTLP(t *testing.T) {
	tests := []struct {
		src  string
		otlp bool
	}{
		{"policy \"p\"\nschema otlp\ndrop when .severity_number < 9\n", true},
		{"policy \"p\"\nschema otlp {\n  attributes: map<string>\n}\nset .attributes.a = \"b\"\n", true},
		{"policy \"p\"\nschema {\n  severity_number: int\n  ...\n}\ndrop when .severity_number < 9\n", false},
		{"policy \"p\"\nlet otlp = 1\nset .otlp = otlp\n", false},
		{"policy \"p\"\nschema otlp\nset .attributes.a = .severity_text\n", true},
		{"policy \"p\"\nschema otlp {\n  body: string\n}\nset .body = upper(.body)\n", true},
		{"policy \"p\"\nset .otlp = 1\n", false},
	}
	for _, tt := range tests {
		f, info, diags := compiler.CheckFile("p.policy", []byte(tt.src))
		if err := diags.Err(); err != nil {
			t.Fatal(err)
		}
		for _, b := range All() {
			p, err := b.Load(f, info, spec.Options{})
			if err != nil {
				t.Fatalf("%s: %v", b.Name, err)
			}
			if got := IsOTLP(p); got != tt.otlp {
				t.Errorf("%s: IsOTLP = %v for\n%s", b.Name, got, tt.src)
			}
		}
	}
	script, err := luascript.Load("s.lua", []byte("function f(tag, ts, r) return 0, ts, r end"), "f")
	if err != nil {
		t.Fatal(err)
	}
	if IsOTLP(script) {
		t.Errorf("a Lua script is OTLP")
	}
}
