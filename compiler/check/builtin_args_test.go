package check

import (
	"strings"
	"testing"

	T "github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/builtin"
)

var (
	str    = T.StringType
	anyOpt = T.OptionalOf(T.AnyType)
	strOpt = T.OptionalOf(T.StringType)
	i64    = T.IntType
	obj    = T.ObjectOf(false, T.Field{Name: "a", Type: T.IntType})
)

func TestSignatures(t *testing.T) {
	tests := []struct {
		name   string
		args   []*T.Type
		result string // "" to skip
		reason argReason
		ok     bool
	}{
		{"len", []*T.Type{str}, "int", 0, true},
		{"len", []*T.Type{T.ArrayOf(i64)}, "int", 0, true},
		{"len", []*T.Type{T.MapOf(str)}, "int", 0, true},
		{"len", []*T.Type{obj}, "int", 0, true},
		{"len", []*T.Type{i64}, "", badType, false},
		{"len", []*T.Type{strOpt}, "", notPresent, false},
		{"len", []*T.Type{anyOpt}, "", needsNarrow, false},
		{"len", nil, "", badCount, false},
		{"lower", []*T.Type{str}, "string", 0, true},
		{"lower", []*T.Type{strOpt}, "", notPresent, false},
		{"lower", []*T.Type{T.AnyType}, "", needsNarrow, false},
		{"lower", []*T.Type{i64}, "", badType, false},
		{"upper", []*T.Type{str}, "string", 0, true},
		{"trim", []*T.Type{str}, "string", 0, true},
		{"trim", []*T.Type{str, str}, "", badCount, false},
		{"contains", []*T.Type{str, str}, "bool", 0, true},
		{"contains", []*T.Type{str}, "", badCount, false},
		{"starts_with", []*T.Type{str, str}, "bool", 0, true},
		{"ends_with", []*T.Type{str, i64}, "", badType, false},
		{"replace", []*T.Type{str, str, str}, "string", 0, true},
		{"split", []*T.Type{str, str}, "array<string>", 0, true},
		{"join", []*T.Type{T.ArrayOf(str), str}, "string", 0, true},
		{"join", []*T.Type{T.ArrayOf(i64), str}, "", badType, false},
		{"join", []*T.Type{T.ArrayOf(T.NeverType), str}, "string", 0, true},
		{"substr", []*T.Type{str, i64, i64}, "string", 0, true},
		{"substr", []*T.Type{str, T.FloatType, i64}, "", badType, false},
		{"matches", []*T.Type{str, str}, "bool", 0, true},
		{"capture", []*T.Type{str, str}, "map<string>?", 0, true},
		{"replace_re", []*T.Type{str, str, str}, "string", 0, true},
		{"to_string", []*T.Type{anyOpt}, "string", 0, true},
		{"to_string", []*T.Type{i64}, "string", 0, true},
		{"to_int", []*T.Type{strOpt}, "int?", 0, true},
		{"to_float", []*T.Type{str}, "float?", 0, true},
		{"to_bool", []*T.Type{str}, "bool?", 0, true},
		{"as_string", []*T.Type{anyOpt}, "string?", 0, true},
		{"as_int", []*T.Type{anyOpt}, "int?", 0, true},
		{"as_float", []*T.Type{anyOpt}, "float?", 0, true},
		{"as_bool", []*T.Type{anyOpt}, "bool?", 0, true},
		{"as_map", []*T.Type{anyOpt}, "map<any>?", 0, true},
		{"as_array", []*T.Type{anyOpt}, "array<any>?", 0, true},
		{"is_string", []*T.Type{anyOpt}, "bool", 0, true},
		{"is_int", []*T.Type{anyOpt}, "bool", 0, true},
		{"is_float", []*T.Type{anyOpt}, "bool", 0, true},
		{"is_bool", []*T.Type{anyOpt}, "bool", 0, true},
		{"is_null", []*T.Type{anyOpt}, "bool", 0, true},
		{"is_map", []*T.Type{anyOpt}, "bool", 0, true},
		{"is_array", []*T.Type{anyOpt}, "bool", 0, true},
		{"is_timestamp", []*T.Type{anyOpt}, "bool", 0, true},
		{"type_of", []*T.Type{anyOpt}, "string", 0, true},
		{"parse_json", []*T.Type{str}, "any?", 0, true},
		{"parse_json", []*T.Type{strOpt}, "", notPresent, false},
		{"parse_kv", []*T.Type{str, str, str}, "map<string>?", 0, true},
		{"parse_logfmt", []*T.Type{str}, "map<string>?", 0, true},
		{"now", nil, "timestamp", 0, true},
		{"now", []*T.Type{str}, "", badCount, false},
		{"parse_time", []*T.Type{str, str, str}, "timestamp?", 0, true},
		{"parse_time", []*T.Type{str, str}, "timestamp?", 0, true},
		{"format_time", []*T.Type{T.TimestampType, str, str}, "string", 0, true},
		{"format_time", []*T.Type{str, str, str}, "", badType, false},
		{"unix_nanos", []*T.Type{T.TimestampType}, "int", 0, true},
		{"hash64", []*T.Type{str}, "int", 0, true},
		{"sha256_hex", []*T.Type{str}, "string", 0, true},
		{"exists", []*T.Type{strOpt}, "bool", 0, true},
		{"exists", []*T.Type{strOpt, str}, "", badCount, false},
		{"keys", []*T.Type{T.MapOf(i64)}, "array<string>", 0, true},
		{"keys", []*T.Type{obj}, "array<string>", 0, true},
		{"keys", []*T.Type{str}, "", badType, false},
		{"keys", []*T.Type{T.ArrayOf(str)}, "", badType, false},
		{"coalesce", []*T.Type{strOpt, strOpt, str}, "string", 0, true},
		{"coalesce", []*T.Type{strOpt, strOpt}, "string?", 0, true},
		{"coalesce", []*T.Type{strOpt, i64}, "", badType, false},
		{"coalesce", []*T.Type{strOpt}, "", badCount, false},

		// time, maps, arrays, strings, numbers, OTLP, identity
		{"unix_seconds", []*T.Type{T.TimestampType}, "int", 0, true},
		{"unix_millis", []*T.Type{T.TimestampType}, "int", 0, true},
		{"unix_millis", []*T.Type{i64}, "", badType, false},
		{"from_unix", []*T.Type{i64, str}, "timestamp", 0, true},
		{"from_unix", []*T.Type{T.FloatType, str}, "timestamp", 0, true},
		{"from_unix", []*T.Type{str, str}, "", badType, false},
		{"from_unix", []*T.Type{T.OptionalOf(i64), str}, "", notPresent, false},
		{"from_unix", []*T.Type{T.AnyType, str}, "", needsNarrow, false},
		{"from_unix", []*T.Type{i64}, "", badCount, false},
		{"parse_duration", []*T.Type{str}, "int?", 0, true},
		{"merge", []*T.Type{T.MapOf(str), T.MapOf(str)}, "map<string>", 0, true},
		{"merge", []*T.Type{T.MapOf(str), T.MapOf(i64)}, "map<any>", 0, true},
		{"merge", []*T.Type{obj, T.ObjectOf(false, T.Field{Name: "b", Type: str})}, "{a: int, b: string}", 0, true},
		{"merge", []*T.Type{obj, T.ObjectOf(false, T.Field{Name: "a", Type: strOpt})}, "{a: any?}", 0, true},
		{"merge", []*T.Type{obj, T.ObjectOf(true, T.Field{Name: "b", Type: str})}, "{a: any, b: string, ...}", 0, true},
		{"merge", []*T.Type{obj, T.MapOf(i64)}, "map<int>", 0, true},
		{"merge", []*T.Type{T.ObjectOf(true), T.MapOf(T.AnyType)}, "map<any>", 0, true},
		{"merge", []*T.Type{str, obj}, "", badType, false},
		{"merge", []*T.Type{obj, T.OptionalOf(obj)}, "", notPresent, false},
		{"merge", []*T.Type{obj}, "", badCount, false},
		{"flatten", []*T.Type{T.MapOf(str), str}, "map<string>", 0, true},
		{"flatten", []*T.Type{T.MapOf(T.MapOf(str)), str}, "map<any>", 0, true},
		{"flatten", []*T.Type{obj, str}, "map<int>", 0, true},
		{"flatten", []*T.Type{T.ArrayOf(str), str}, "", badType, false},
		{"unflatten", []*T.Type{T.MapOf(str), str}, "map<any>", 0, true},
		{"unflatten", []*T.Type{T.MapOf(str), i64}, "", badType, false},
		{"keep_keys", []*T.Type{T.MapOf(str), str}, "map<string>", 0, true},
		{"keep_keys", []*T.Type{obj, str}, "{a: int}", 0, true},
		{"drop_keys", []*T.Type{T.AnyType, str}, "", needsNarrow, false},
		{"values", []*T.Type{T.MapOf(str)}, "array<string>", 0, true},
		{"values", []*T.Type{T.ObjectOf(false, T.Field{Name: "a", Type: i64}, T.Field{Name: "b", Type: strOpt})}, "array<any>", 0, true},
		{"values", []*T.Type{T.ObjectOf(false, T.Field{Name: "a", Type: str}, T.Field{Name: "b", Type: strOpt})}, "array<string?>", 0, true},
		{"values", []*T.Type{T.ObjectOf(true)}, "array<any>", 0, true},
		{"append", []*T.Type{T.ArrayOf(str), str}, "array<string>", 0, true},
		{"append", []*T.Type{T.ArrayOf(str), strOpt}, "array<string?>", 0, true},
		{"append", []*T.Type{T.ArrayOf(T.NeverType), i64}, "array<int>", 0, true},
		{"append", []*T.Type{T.ArrayOf(str), T.AnyType}, "array<any>", 0, true},
		{"append", []*T.Type{T.ArrayOf(str), i64}, "", badType, false},
		{"append", []*T.Type{str, i64}, "", badType, false},
		{"append", []*T.Type{T.OptionalOf(T.ArrayOf(str)), str}, "", notPresent, false},
		{"includes", []*T.Type{T.ArrayOf(str), strOpt}, "bool", 0, true},
		{"includes", []*T.Type{T.ArrayOf(i64), T.FloatType}, "bool", 0, true},
		{"includes", []*T.Type{T.ArrayOf(i64), str}, "", badType, false},
		{"unique", []*T.Type{T.ArrayOf(i64)}, "array<int>", 0, true},
		{"unique", []*T.Type{T.MapOf(i64)}, "", badType, false},
		{"slice", []*T.Type{T.ArrayOf(i64), i64, i64}, "array<int>", 0, true},
		{"slice", []*T.Type{T.ArrayOf(i64), i64}, "", badCount, false},
		{"slice", []*T.Type{T.ArrayOf(i64), i64, T.FloatType}, "", badType, false},
		{"format", []*T.Type{str}, "string", 0, true},
		{"format", []*T.Type{str, i64, anyOpt}, "string", 0, true}, // the verbs check the rest
		{"format", []*T.Type{i64}, "", badType, false},
		{"format", nil, "", badCount, false},
		{"truncate", []*T.Type{str, i64}, "string", 0, true},
		{"truncate", []*T.Type{str, str}, "", badType, false},
		{"trim_prefix", []*T.Type{str, str}, "string", 0, true},
		{"trim_suffix", []*T.Type{str, strOpt}, "", notPresent, false},
		{"index_of", []*T.Type{str, str}, "int", 0, true},
		{"round", []*T.Type{T.FloatType, i64}, "float", 0, true},
		{"round", []*T.Type{i64, i64}, "float", 0, true},
		{"round", []*T.Type{str, i64}, "", badType, false},
		{"round", []*T.Type{T.FloatType, T.FloatType}, "", badType, false},
		{"floor", []*T.Type{T.FloatType}, "int", 0, true},
		{"floor", []*T.Type{T.OptionalOf(T.FloatType)}, "", notPresent, false},
		{"ceil", []*T.Type{i64}, "int", 0, true},
		{"ceil", []*T.Type{T.AnyType}, "", needsNarrow, false},
		{"abs", []*T.Type{i64}, "int", 0, true},
		{"abs", []*T.Type{T.FloatType}, "float", 0, true},
		{"min", []*T.Type{i64, i64}, "int", 0, true},
		{"min", []*T.Type{i64, T.FloatType}, "float", 0, true},
		{"max", []*T.Type{T.FloatType, T.FloatType}, "float", 0, true},
		{"max", []*T.Type{i64, str}, "", badType, false},
		{"severity_number", []*T.Type{str}, "int", 0, true},
		{"severity_number", []*T.Type{i64}, "", badType, false},
		{"uuid_v4", nil, "string", 0, true},
		{"uuid_v7", nil, "string", 0, true},
		{"uuid_v7", []*T.Type{i64}, "", badCount, false},
	}
	seen := map[string]bool{}
	for _, tt := range append(tests, partBSignatures...) {
		f := builtin.Lookup(tt.name)
		if f == nil {
			t.Fatalf("Lookup(%q) = nil", tt.name)
		}
		seen[tt.name] = true
		res, err := checkArgs(f, tt.args)
		if (err == nil) != tt.ok {
			t.Errorf("%s%v: err = %v, want ok=%v", tt.name, tt.args, err, tt.ok)
			continue
		}
		if err != nil && err.Reason != tt.reason {
			t.Errorf("%s%v: reason %d, want %d (%s)", tt.name, tt.args, err.Reason, tt.reason, err.Msg)
		}
		if tt.result != "" && res.String() != tt.result {
			t.Errorf("%s%v = %s, want %s", tt.name, tt.args, res, tt.result)
		}
	}
	for _, f := range builtin.All() {
		if !seen[f.Name] {
			t.Errorf("no signature test for %s", f.Name)
		}
	}
}

// TestSignatureTypes holds the table's signatures to the checker's types:
// every monomorphic signature's types parse and print back as written, and
// only the polymorphic ones are typed by a function.
func TestSignatureTypes(t *testing.T) {
	for _, f := range builtin.All() {
		sig := signatures[f.ID]
		if sig.check != nil {
			continue
		}
		var ps []string
		for i, p := range f.Params {
			if ps = append(ps, p.Name+" "+sig.params[i].String()); p.Default != "" {
				ps[i] += " = " + p.Default
			}
		}
		if got := f.Name + "(" + strings.Join(ps, ", ") + ") " + sig.result.String(); got != f.Sig {
			t.Errorf("%s: types print as %q", f.Sig, got)
		}
		// The type tests are is_ of any?; is_ipv4(s string) tests a string.
		if (sig.narrows != nil) != (strings.HasPrefix(f.Name, "is_") && f.Params[0].Type == "any?") {
			t.Errorf("%s: narrows = %v", f.Name, sig.narrows)
		}
	}
}
