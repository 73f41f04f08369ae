package csvtext

import (
	"encoding/csv"
	"io"
	"reflect"
	"strings"
	"testing"
)

// parse is parse_csv as the backends run it.
func parse(s, sep string) ([]string, bool) {
	var f Fields
	if !f.Init(s, sep) {
		return nil, false
	}
	out := []string{}
	for f.Next() {
		if f.Plain() {
			out = append(out, f.Raw())
		} else {
			out = append(out, string(f.AppendValue(nil)))
		}
	}
	if f.Err() {
		return nil, false
	}
	return out, true
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		s, sep string
		want   []string
	}{
		{"a,b,c", ",", []string{"a", "b", "c"}},
		{"", ",", []string{""}},
		{",", ",", []string{"", ""}},
		{"a,", ",", []string{"a", ""}},
		{`"a,b",c`, ",", []string{"a,b", "c"}},
		{`"say ""hi""",x`, ",", []string{`say "hi"`, "x"}},
		{`""`, ",", []string{""}},
		{`"",""`, ",", []string{"", ""}},
		{"\"two\nlines\",x", ",", []string{"two\nlines", "x"}},
		{"a,b\n", ",", []string{"a", "b"}},
		{"a,b\r\n", ",", []string{"a", "b"}},
		{`a"b,c`, ",", []string{`a"b`, "c"}},
		{" a , b ", ",", []string{" a ", " b "}},
		{"a\tb", "\t", []string{"a", "b"}},
		{"a;b,c", ";", []string{"a", "b,c"}},
		{`"a`, ",", nil},
		{`"a"b,c`, ",", nil},
		{"a\nb", ",", nil},
		{"a,b\n\n", ",", nil},
		{"a,b", "", nil},
		{"a,b", ",;", nil},
		{"a,b", `"`, nil},
		{"a,b", "\n", nil},
	} {
		got, ok := parse(tc.s, tc.sep)
		if ok != (tc.want != nil) || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parse_csv(%q, %q) = %q, %v", tc.s, tc.sep, got, ok)
		}
	}
}

// FuzzParse holds parse_csv to encoding/csv on the records both read the
// same way: one line, ASCII separators, no quote inside an unquoted field.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"a,b", `"a,""b",c`, "x\n", `"`, ",,", "\"a\nb\",c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parse(s, ",")
		if strings.ContainsAny(s, "\r") || strings.TrimSuffix(s, "\n") == "" || strings.HasPrefix(s, "\n") || strings.Contains(s, "\n\n") {
			return
		}
		r := csv.NewReader(strings.NewReader(s))
		r.FieldsPerRecord = -1
		ref, err := r.Read()
		if err != nil {
			return // encoding/csv is stricter about bare quotes
		}
		if _, err2 := r.Read(); err2 != io.EOF {
			if ok && err2 == nil {
				t.Fatalf("%q: one record for us, two for encoding/csv", s)
			}
			return // more than one line
		}
		if !ok || !reflect.DeepEqual(got, ref) {
			t.Fatalf("%q: %q %v, encoding/csv %q", s, got, ok, ref)
		}
	})
}
