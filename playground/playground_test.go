package playground

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

const dropWhen = `policy "drop-when"

schema {
  level: string
  ...
}

drop when .level == "debug"
set .kept = true
`

func TestRunRecords(t *testing.T) {
	input := `{"level":"debug","msg":"x"}
{"level":"info"}

{"level":5}
not json
`
	res := Run(dropWhen, input)
	if !res.Ran || len(res.Diagnostics) != 0 || res.Error != "" {
		t.Fatalf("the policy did not run: %+v", res)
	}
	if res.Name != "drop-when" || res.OTLP {
		t.Errorf("name %q, otlp %v", res.Name, res.OTLP)
	}
	want := []Outcome{
		{Line: 1, Action: "drop"},
		{Line: 2, Action: "keep", Output: `{"level":"info","kept":true}`},
		{Line: 4, Action: "keep", Fault: "type_mismatch", Output: `{"level":5}`},
		{Line: 5, Action: "pass", Output: "not json"},
	}
	got := res.Records
	if len(got) == 4 && got[3].Error != "" {
		got[3].Error = ""
	} else {
		t.Errorf("the malformed line has no error: %+v", got)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("records:\n got %+v\nwant %+v", got, want)
	}
	wantOut := []string{`{"level":"info","kept":true}`, `{"level":5}`, "not json"}
	if !reflect.DeepEqual(res.Output, wantOut) {
		t.Errorf("output:\n got %q\nwant %q", res.Output, wantOut)
	}
	if want := "4 in, 3 out, 1 dropped, 1 faulted (type_mismatch 1), 1 malformed passed through"; res.Summary != want {
		t.Errorf("summary %q, want %q", res.Summary, want)
	}
}

func TestRunDiagnostics(t *testing.T) {
	src := "policy \"p\"\n\nschema {\n  status: int\n  ...\n}\n\ndrop when .status == \"500\"\n"
	res := Run(src, `{"status":500}`)
	if res.Ran || len(res.Output) != 0 || len(res.Records) != 0 {
		t.Errorf("a policy with errors ran: %+v", res)
	}
	if len(res.Diagnostics) != 1 {
		t.Fatalf("diagnostics %+v, want one", res.Diagnostics)
	}
	d := res.Diagnostics[0]
	if d.Code != "E0301" || d.Severity != "error" || d.Line != 8 || d.Col != 11 || d.EndLine != 8 || d.EndCol != 27 {
		t.Errorf("diagnostic %+v, want E0301 error at 8:11-8:27", d)
	}
	if d.Hint == "" || d.Message == "" {
		t.Errorf("diagnostic %+v has no message or hint", d)
	}
	if got := src[d.From:d.To]; got != `.status == "500"` {
		t.Errorf("the span selects %q", got)
	}
	for _, s := range []string{"error[E0301]", "playground.policy:8:11", "help:"} {
		if !strings.Contains(res.Text, s) {
			t.Errorf("the text has no %q:\n%s", s, res.Text)
		}
	}
}

func TestRunSyntaxAndTypeErrors(t *testing.T) {
	// A syntax error does not hide the type errors of the other lines.
	src := "policy \"p\"\nschema {\n  n: int\n  ...\n}\nfrobnicate .x\nset .b = .n + \"x\"\n"
	res := Run(src, "")
	var codes []string
	for _, d := range res.Diagnostics {
		codes = append(codes, d.Code)
	}
	if len(codes) != 2 || codes[0] != "E0028" || codes[1] != "E0303" {
		t.Errorf("codes %v, want a syntax error then E0303", codes)
	}
}

func TestRunWarningStillRuns(t *testing.T) {
	src := "policy \"p\"\nschema {\n  n: int\n  ...\n}\nset .m = .n ?? 0\n"
	res := Run(src, `{"n":1}`)
	if !res.Ran || len(res.Diagnostics) != 1 || res.Diagnostics[0].Severity != "warning" {
		t.Fatalf("%+v", res)
	}
	if want := []string{`{"n":1,"m":1}`}; !reflect.DeepEqual(res.Output, want) {
		t.Errorf("output %q, want %q", res.Output, want)
	}
}

func TestRunOTLPViews(t *testing.T) {
	src := `policy "o"
schema otlp {
  attributes: { "http.status": int?, ... }
}
drop when .severity_number < 9
set .attributes.seen = true
`
	input := `{"severity_number":5}
{"severity_number":9,"body":"hi","attributes":{"http.status":200}}
{"severity_number":"high"}
`
	res := Run(src, input)
	if !res.Ran || !res.OTLP {
		t.Fatalf("%+v", res)
	}
	if len(res.Records) != 3 || res.Records[0].Action != "drop" || res.Records[1].Action != "keep" || res.Records[2].Action != "pass" {
		t.Fatalf("records %+v", res.Records)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(res.Records[1].Output), &rec); err != nil {
		t.Fatal(err)
	}
	attrs, _ := rec["attributes"].(map[string]any)
	if rec["body"] != "hi" || attrs["seen"] != true || attrs["http.status"] != 200.0 {
		t.Errorf("output %s", res.Records[1].Output)
	}
	if !strings.Contains(res.Records[2].Error, "severity_number") {
		t.Errorf("a view with a bad fixed key: %+v", res.Records[2])
	}
}

func TestRunUTF16Spans(t *testing.T) {
	// The span's offsets count UTF-16 units: "é" is one, "𝄞" two.
	src := "# é 𝄞\npolicy \"p\"\nschema {\n  n: int\n  ...\n}\nset .m = .n + \"x\"\n"
	res := Run(src, "")
	if len(res.Diagnostics) != 1 {
		t.Fatalf("%+v", res.Diagnostics)
	}
	d := res.Diagnostics[0]
	start := strings.Index(src, `.n + "x"`)
	wantFrom := start - 1 - 2 // é is 2 bytes, 1 unit; 𝄞 is 4 bytes, 2 units
	if d.From != wantFrom || d.To-d.From != len(`.n + "x"`) {
		t.Errorf("span %d-%d, want %d-%d", d.From, d.To, wantFrom, wantFrom+len(`.n + "x"`))
	}
}

func TestRunEmpty(t *testing.T) {
	res := Run("", "")
	if res.Ran || len(res.Diagnostics) == 0 || res.Error != "" {
		t.Errorf("an empty policy: %+v", res)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"diagnostics":[`, `"records":[]`, `"output":[]`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("the JSON has no %s: %s", k, b)
		}
	}
}

// RunFiles: a policy imports the module beside it and takes parameters;
// a module's diagnostic says its file and its own line; a malformed
// parameter line is an error of the run.
func TestRunFilesModulesAndParams(t *testing.T) {
	mod := "module \"net\"\n\nconst sep = \".\"\n\nfn head(ip: string, keep: int) string {\n  return join(slice(split(ip, sep), 0, keep), sep)\n}\n"
	src := "policy \"p\"\n\nimport \"net.policy\"\n\nschema {\n  ip: string\n  ...\n}\n\nparam keep: int\n\nset .ip = net.head(.ip, keep)\n"
	res := RunFiles(src, `{"ip":"10.1.2.3"}`, map[string]string{"net.policy": mod}, "keep=2\n")
	if !res.Ran || strings.Join(res.Output, "\n") != `{"ip":"10.1"}` {
		t.Errorf("ran %v, output %q, diagnostics %+v, error %q", res.Ran, res.Output, res.Diagnostics, res.Error)
	}
	res = RunFiles(src, `{"ip":"10.1.2.3"}`, map[string]string{"net.policy": mod}, "")
	if res.Ran || len(res.Diagnostics) != 1 || res.Diagnostics[0].Code != "E0610" {
		t.Errorf("without keep: ran %v, %+v", res.Ran, res.Diagnostics)
	}
	broken := strings.Replace(mod, "string {", "int {", 1)
	res = RunFiles(src, `{"ip":"10.1.2.3"}`, map[string]string{"net.policy": broken}, "keep=2")
	if res.Ran || len(res.Diagnostics) != 1 || res.Diagnostics[0].File != "net.policy" || res.Diagnostics[0].Line != 6 || !strings.Contains(res.Text, "return join") {
		t.Errorf("a broken module: ran %v, %+v\n%s", res.Ran, res.Diagnostics, res.Text)
	}
	res = RunFiles(src, "", nil, "keep=2")
	if len(res.Diagnostics) != 1 || res.Diagnostics[0].Code != "E0615" {
		t.Errorf("no module: %+v", res.Diagnostics)
	}
	if res = RunFiles(src, "", nil, "keep"); res.Error == "" {
		t.Errorf("a parameter line without '=': no error")
	}
}

// TestRunSplit: a line a split makes several records of has an outcome
// for each, in order, under its line.
func TestRunSplit(t *testing.T) {
	const src = "policy \"s\"\nschema {\n  xs: array<int>?\n  ...\n}\nsplit .xs\ndrop when .xs == 0\n"
	res := Run(src, `{"xs":[1,0,2]}`+"\n"+`{"xs":[]}`+"\n")
	want := []Outcome{
		{Line: 1, Action: "keep", Output: `{"xs":1}`},
		{Line: 1, Action: "drop"},
		{Line: 1, Action: "keep", Output: `{"xs":2}`},
		{Line: 2, Action: "drop"},
	}
	if !reflect.DeepEqual(res.Records, want) {
		t.Errorf("records:\n got %+v\nwant %+v", res.Records, want)
	}
	if want := "2 in, 2 out, 2 dropped, 0 faulted, 2 added by split"; res.Summary != want {
		t.Errorf("summary %q, want %q", res.Summary, want)
	}
}
