// Package builtin lists the built-in functions of the policy language
// (docs/language.md, "Built-in functions"): each one's ID, typed signature,
// argument rules and doc line.
package builtin

import (
	"fmt"
	"sort"

	"github.com/policyrun/policyrun/compiler/types"
)

// ID identifies a built-in for the back ends (the VM's call opcode and the
// Lua transpiler switch on it). IDs are stable: new functions are appended.
type ID uint8

const (
	Invalid ID = iota
	Len
	Lower
	Upper
	Trim
	Contains
	StartsWith
	EndsWith
	Replace
	Split
	Join
	Substr
	Matches
	Capture
	ReplaceRe
	ToString
	ToInt
	ToFloat
	ToBool
	AsString
	AsInt
	AsFloat
	AsBool
	AsMap
	AsArray
	IsString
	IsInt
	IsFloat
	IsBool
	IsNull
	IsMap
	IsArray
	IsTimestamp
	TypeOf
	ParseJSON
	ParseKV
	ParseLogfmt
	Now
	ParseTime
	FormatTime
	UnixNanos
	Hash64
	Sha256Hex
	Exists
	Keys
	Coalesce
	numIDs
)

// Param is one fixed parameter of a built-in.
type Param struct {
	Name string
	Type *types.Type
}

// Func describes one built-in function.
type Func struct {
	Name string
	ID   ID
	Sig  string // the signature as the reference writes it
	Doc  string // one line

	// Params and Result describe a monomorphic function. When Check is set
	// it replaces them: it is given every argument's type and decides.
	Params []Param
	Result *types.Type
	Check  func(args []*types.Type) (*types.Type, *ArgError)

	// RegexArg is the index of the argument that must be a constant RE2
	// pattern (compiled at check time), or -1.
	RegexArg int
	// PathArg is the index of the argument that must be a path, or -1.
	PathArg int
	// Narrows is the type an is_ test proves its argument has when it
	// returns true; nil for other functions.
	Narrows *types.Type
}

// Reason says what is wrong with a call's arguments.
type Reason int

const (
	BadCount    Reason = iota // wrong number of arguments
	BadType                   // an argument of the wrong type
	NotPresent                // an optional argument where a value is needed
	NeedsNarrow               // an any argument where a typed value is needed
)

// ArgError is a problem with a call's arguments. Arg is the argument's
// index (-1 for a count error); Want says what was expected there.
type ArgError struct {
	Reason Reason
	Arg    int
	Want   string
	Msg    string
}

func (e *ArgError) Error() string { return e.Msg }

var (
	str     = types.StringType
	integer = types.IntType
	boolean = types.BoolType
	ts      = types.TimestampType
	anyOpt  = types.OptionalOf(types.AnyType)
	strArr  = types.ArrayOf(types.StringType)
	strMap  = types.MapOf(types.StringType)
)

func p(name string, t *types.Type) Param { return Param{Name: name, Type: t} }

var funcs = []*Func{
	{Name: "len", ID: Len, Sig: "len(string|array|map|object) int", Doc: "the length of a string in bytes, or the number of elements or keys", Check: checkLen},
	{Name: "lower", ID: Lower, Sig: "lower(s string) string", Doc: "s with Unicode letters mapped to lower case", Params: []Param{p("s", str)}, Result: str},
	{Name: "upper", ID: Upper, Sig: "upper(s string) string", Doc: "s with Unicode letters mapped to upper case", Params: []Param{p("s", str)}, Result: str},
	{Name: "trim", ID: Trim, Sig: "trim(s string) string", Doc: "s without leading and trailing white space", Params: []Param{p("s", str)}, Result: str},
	{Name: "contains", ID: Contains, Sig: "contains(s string, sub string) bool", Doc: "whether sub occurs in s", Params: []Param{p("s", str), p("sub", str)}, Result: boolean},
	{Name: "starts_with", ID: StartsWith, Sig: "starts_with(s string, prefix string) bool", Doc: "whether s begins with prefix", Params: []Param{p("s", str), p("prefix", str)}, Result: boolean},
	{Name: "ends_with", ID: EndsWith, Sig: "ends_with(s string, suffix string) bool", Doc: "whether s ends with suffix", Params: []Param{p("s", str), p("suffix", str)}, Result: boolean},
	{Name: "replace", ID: Replace, Sig: "replace(s string, old string, new string) string", Doc: "s with every non-overlapping old replaced by new", Params: []Param{p("s", str), p("old", str), p("new", str)}, Result: str},
	{Name: "split", ID: Split, Sig: "split(s string, sep string) array<string>", Doc: "s cut around every sep (an empty sep splits into UTF-8 characters)", Params: []Param{p("s", str), p("sep", str)}, Result: strArr},
	{Name: "join", ID: Join, Sig: "join(parts array<string>, sep string) string", Doc: "the parts joined with sep between them", Params: []Param{p("parts", strArr), p("sep", str)}, Result: str},
	{Name: "substr", ID: Substr, Sig: "substr(s string, start int, end int) string", Doc: "the bytes of s from start up to end, both clamped to [0, len(s)]", Params: []Param{p("s", str), p("start", integer), p("end", integer)}, Result: str},
	{Name: "matches", ID: Matches, Sig: "matches(s string, re string) bool", Doc: "whether the constant RE2 pattern re matches somewhere in s", Params: []Param{p("s", str), p("re", str)}, Result: boolean, RegexArg: 1},
	{Name: "capture", ID: Capture, Sig: "capture(s string, re string) map<string>?", Doc: "the named groups of the first match of re in s, or null when it does not match", Params: []Param{p("s", str), p("re", str)}, Result: types.OptionalOf(strMap), RegexArg: 1},
	{Name: "replace_re", ID: ReplaceRe, Sig: "replace_re(s string, re string, repl string) string", Doc: "s with every match of re replaced by repl ($1, ${name} expand groups)", Params: []Param{p("s", str), p("re", str), p("repl", str)}, Result: str, RegexArg: 1},

	{Name: "to_string", ID: ToString, Sig: "to_string(v any?) string", Doc: "v as text: strings as they are, numbers and booleans formatted, null and absent as \"\", maps and arrays as JSON", Params: []Param{p("v", anyOpt)}, Result: str},
	{Name: "to_int", ID: ToInt, Sig: "to_int(v any?) int?", Doc: "v converted to an int (floats truncate, strings parse, booleans 0/1), or null", Params: []Param{p("v", anyOpt)}, Result: types.OptionalOf(integer)},
	{Name: "to_float", ID: ToFloat, Sig: "to_float(v any?) float?", Doc: "v converted to a float (ints widen, strings parse), or null", Params: []Param{p("v", anyOpt)}, Result: types.OptionalOf(types.FloatType)},
	{Name: "to_bool", ID: ToBool, Sig: "to_bool(v any?) bool?", Doc: "v converted to a bool (\"true\"/\"false\", 1/0), or null", Params: []Param{p("v", anyOpt)}, Result: types.OptionalOf(boolean)},
	{Name: "as_string", ID: AsString, Sig: "as_string(v any?) string?", Doc: "v if it is a string, else null (no conversion)", Params: []Param{p("v", anyOpt)}, Result: types.OptionalOf(str)},
	{Name: "as_int", ID: AsInt, Sig: "as_int(v any?) int?", Doc: "v if it is an int, else null (no conversion)", Params: []Param{p("v", anyOpt)}, Result: types.OptionalOf(integer)},
	{Name: "as_float", ID: AsFloat, Sig: "as_float(v any?) float?", Doc: "v if it is a float, else null (no conversion)", Params: []Param{p("v", anyOpt)}, Result: types.OptionalOf(types.FloatType)},
	{Name: "as_bool", ID: AsBool, Sig: "as_bool(v any?) bool?", Doc: "v if it is a bool, else null (no conversion)", Params: []Param{p("v", anyOpt)}, Result: types.OptionalOf(boolean)},
	{Name: "as_map", ID: AsMap, Sig: "as_map(v any?) map<any>?", Doc: "v if it is a map (object), else null", Params: []Param{p("v", anyOpt)}, Result: types.OptionalOf(types.MapOf(types.AnyType))},
	{Name: "as_array", ID: AsArray, Sig: "as_array(v any?) array<any>?", Doc: "v if it is an array, else null", Params: []Param{p("v", anyOpt)}, Result: types.OptionalOf(types.ArrayOf(types.AnyType))},
	isTest("is_string", IsString, str),
	isTest("is_int", IsInt, integer),
	isTest("is_float", IsFloat, types.FloatType),
	isTest("is_bool", IsBool, boolean),
	isTest("is_null", IsNull, types.NullType),
	isTest("is_map", IsMap, types.MapOf(types.AnyType)),
	isTest("is_array", IsArray, types.ArrayOf(types.AnyType)),
	isTest("is_timestamp", IsTimestamp, ts),
	{Name: "type_of", ID: TypeOf, Sig: "type_of(v any?) string", Doc: "the name of v's runtime type: \"null\" (also when absent), \"bool\", \"int\", \"float\", \"string\", \"bytes\", \"timestamp\", \"array\" or \"map\"", Params: []Param{p("v", anyOpt)}, Result: str},

	{Name: "parse_json", ID: ParseJSON, Sig: "parse_json(s string) any?", Doc: "the JSON value s holds, or null when s is not JSON", Params: []Param{p("s", str)}, Result: anyOpt},
	{Name: "parse_kv", ID: ParseKV, Sig: "parse_kv(s string, pair_sep string, kv_sep string) map<string>?", Doc: "s split into pairs on pair_sep and each pair into key and value on kv_sep, or null when a pair has no kv_sep", Params: []Param{p("s", str), p("pair_sep", str), p("kv_sep", str)}, Result: types.OptionalOf(strMap)},
	{Name: "parse_logfmt", ID: ParseLogfmt, Sig: "parse_logfmt(s string) map<string>?", Doc: "the key=value pairs of a logfmt line (quoted values unquoted), or null when s is not logfmt", Params: []Param{p("s", str)}, Result: types.OptionalOf(strMap)},

	{Name: "now", ID: Now, Sig: "now() timestamp", Doc: "the current time (fixed in tests)", Result: ts},
	{Name: "parse_time", ID: ParseTime, Sig: "parse_time(s string, layout string) timestamp?", Doc: "s read with a strftime layout (%Y-%m-%dT%H:%M:%S...), or null when it does not match", Params: []Param{p("s", str), p("layout", str)}, Result: types.OptionalOf(ts)},
	{Name: "format_time", ID: FormatTime, Sig: "format_time(t timestamp, layout string) string", Doc: "t written with a strftime layout, in UTC", Params: []Param{p("t", ts), p("layout", str)}, Result: str},
	{Name: "unix_nanos", ID: UnixNanos, Sig: "unix_nanos(t timestamp) int", Doc: "nanoseconds since 1970-01-01T00:00:00Z", Params: []Param{p("t", ts)}, Result: integer},

	{Name: "hash64", ID: Hash64, Sig: "hash64(s string) int", Doc: "the 64-bit FNV-1a hash of s shifted right by 11 bits (exact in a float64), for sampling", Params: []Param{p("s", str)}, Result: integer},
	{Name: "sha256_hex", ID: Sha256Hex, Sig: "sha256_hex(s string) string", Doc: "the SHA-256 of s's bytes in lower-case hex", Params: []Param{p("s", str)}, Result: str},

	{Name: "exists", ID: Exists, Sig: "exists(P path) bool", Doc: "whether the path P is present (even when it holds null)", Check: checkExists, PathArg: 0},
	{Name: "keys", ID: Keys, Sig: "keys(m map|object) array<string>", Doc: "the keys of m, in the record's order", Check: checkKeys},
	{Name: "coalesce", ID: Coalesce, Sig: "coalesce(a T?, b T?, ..., c T) T", Doc: "the first argument that is present and not null (a chain of ??)", Check: checkCoalesce},
}

func isTest(name string, id ID, t *types.Type) *Func {
	return &Func{
		Name: name, ID: id, Sig: name + "(v any?) bool",
		Doc:    "whether v is present and is a " + t.String(),
		Params: []Param{p("v", anyOpt)}, Result: boolean, Narrows: t,
	}
}

var byName = map[string]*Func{}
var byID [numIDs]*Func

func init() {
	for _, f := range funcs {
		// Only three functions take a regex and one a path; the zero index
		// would otherwise claim the first argument.
		if f.ID != Matches && f.ID != Capture && f.ID != ReplaceRe {
			f.RegexArg = -1
		}
		if f.ID != Exists {
			f.PathArg = -1
		}
		if byName[f.Name] != nil || byID[f.ID] != nil {
			panic("builtin: duplicate " + f.Name)
		}
		byName[f.Name] = f
		byID[f.ID] = f
	}
}

// Lookup returns the built-in called name, or nil.
func Lookup(name string) *Func { return byName[name] }

// ByID returns the built-in with the given ID, or nil.
func ByID(id ID) *Func {
	if int(id) < len(byID) {
		return byID[id]
	}
	return nil
}

// All returns every built-in, sorted by name.
func All() []*Func {
	out := append([]*Func(nil), funcs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns every built-in's name, sorted (for "did you mean" hints).
func Names() []string {
	var out []string
	for _, f := range All() {
		out = append(out, f.Name)
	}
	return out
}

func (id ID) String() string {
	if f := ByID(id); f != nil {
		return f.Name
	}
	return fmt.Sprintf("builtin(%d)", id)
}
