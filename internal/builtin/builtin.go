// Package builtin is the one table of the policy language's built-in
// functions: each one's ID, name, typed signature and doc line.
//
// It imports nothing of ours, so that every layer reads the same table: the
// checker types calls from the signatures, the VM and the Lua backend
// register an implementation for each ID (and fail their tests when one is
// missing), and docs/language.md is held to it by a test. Adding a built-in
// means one row here, one VM function, one Lua function, one docs row and
// conformance cases.
//
// Signatures are written as the reference writes them:
//
//	name(param type, ...) result
//
// A parameter may have a default, `tz string = "UTC"` or `digits int = 0`
// (a string or int literal): calls may leave out the parameters with
// defaults at the end, and the checker fills in the default (Info.Args), so
// that backends always see every argument. A parameter `args ...` takes
// any number of arguments (format); `a T?, b T?, ..., c T` is coalesce's.
// Const names the parameter whose argument must be a constant string,
// checked when the policy is checked (a zone name, a unit, a format);
// Regex marks the parameter named re as a constant RE2 pattern, Grok the
// one named pattern as a constant grok pattern.
package builtin

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ID identifies a built-in in compiled programs (the VM's CALL operand) and
// in every backend's table. IDs are stable: new functions are appended.
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

	// encoding, hashing, network, log formats
	EncodeBase64
	DecodeBase64
	EncodeHex
	DecodeHex
	EncodeURL
	DecodeURL
	MD5Hex
	SHA1Hex
	SHA512Hex
	HMACSHA256Hex
	XXHash64
	IPInCIDR
	IsIPv4
	IsIPv6
	ParseURL
	ParseQuery
	ParseCSV
	ParseCommonLog
	ParseSyslog
	ParseGrok

	// time, maps, arrays, strings, numbers, OTLP, identity
	UnixSeconds
	UnixMillis
	FromUnix
	ParseDuration
	Merge
	Flatten
	Unflatten
	KeepKeys
	DropKeys
	Values
	Append
	Includes
	Unique
	Slice
	Format
	Truncate
	TrimPrefix
	TrimSuffix
	IndexOf
	Round
	Floor
	Ceil
	Abs
	Min
	Max
	SeverityNumber
	UUIDv4
	UUIDv7

	// NumIDs is one more than the largest ID: backends size their tables
	// of implementations with it.
	NumIDs
)

// Func describes one built-in function.
type Func struct {
	ID   ID
	Name string
	// Sig is the typed signature as the reference writes it:
	// "name(param type, ...) result". Types are the language's; a parameter
	// of type path takes a path, not a value.
	Sig string
	Doc string // one line: what the call gives
	// Regex marks the parameter named re as a constant RE2 pattern, which
	// the checker compiles.
	Regex bool
	// Const names the parameter whose argument must be a constant string
	// (a literal, or the default), which the checker validates; "" for
	// none. Unlike the regex, it is passed as a value.
	Const string
	// Grok marks the parameter named pattern as a constant grok pattern,
	// which the checker expands to RE2 and compiles: backends get it as
	// they get a regex (RegexArg).
	Grok bool
	// Narrows is the type (as Sig writes types) an is_ test proves its
	// argument has when it returns true; "" for other functions.
	Narrows string

	// Derived from Sig by this package.
	Params []Param
	Result string
	// RegexArg, PathArg and ConstArg are the indexes of the regex, path
	// and constant parameters, or -1.
	RegexArg, PathArg, ConstArg int
}

// Param is one parameter of a signature; Name is empty where the signature
// gives only a type (len(string|array|map|object)). A parameter written
// "sep string = \",\"" may be left out of a call: Default is its value as
// the signature writes it (a string or an int literal), "" when it has none.
type Param struct {
	Name    string
	Type    string
	Default string
}

// DefaultString is the value of a string parameter's default.
func (p Param) DefaultString() string {
	s, err := strconv.Unquote(p.Default)
	if err != nil {
		panic("builtin: default " + p.Default + " is not a string")
	}
	return s
}

// MinArgs is how many arguments a call must pass: the parameters before
// the first with a default (or the variadic one).
func (f *Func) MinArgs() int {
	for i, p := range f.Params {
		if p.Default != "" || p.Type == "..." {
			return i
		}
	}
	return len(f.Params)
}

// ValueArgs is how many arguments a call passes as values: all but the
// regex, which backends compile once, when the program is built. A
// variadic function's calls pass as many as they have (the VM's CALL says
// how many).
func (f *Func) ValueArgs() int {
	if f.RegexArg >= 0 {
		return len(f.Params) - 1
	}
	return len(f.Params)
}

// Variadic reports whether f takes any number of arguments (coalesce,
// format).
func (f *Func) Variadic() bool {
	for _, p := range f.Params {
		if p.Type == "..." {
			return true
		}
	}
	return false
}

// table is the definition. Rows are indexed by ID so that an ID and its row
// cannot drift apart.
var table = [NumIDs]Func{
	Len:        {Sig: "len(string|array|map|object) int", Doc: "the length of a string in bytes, or the number of elements or keys"},
	Lower:      {Sig: "lower(s string) string", Doc: "s with Unicode letters mapped to lower case"},
	Upper:      {Sig: "upper(s string) string", Doc: "s with Unicode letters mapped to upper case"},
	Trim:       {Sig: "trim(s string) string", Doc: "s without leading and trailing white space"},
	Contains:   {Sig: "contains(s string, sub string) bool", Doc: "whether sub occurs in s"},
	StartsWith: {Sig: "starts_with(s string, prefix string) bool", Doc: "whether s begins with prefix"},
	EndsWith:   {Sig: "ends_with(s string, suffix string) bool", Doc: "whether s ends with suffix"},
	Replace:    {Sig: "replace(s string, old string, new string) string", Doc: "s with every non-overlapping old replaced by new"},
	Split:      {Sig: "split(s string, sep string) array<string>", Doc: "s cut around every sep (an empty sep splits into UTF-8 characters)"},
	Join:       {Sig: "join(parts array<string>, sep string) string", Doc: "the parts joined with sep between them"},
	Substr:     {Sig: "substr(s string, start int, end int) string", Doc: "the bytes of s from start up to end, both clamped to [0, len(s)]"},

	Matches:   {Sig: "matches(s string, re string) bool", Doc: "whether the constant RE2 pattern re matches somewhere in s", Regex: true},
	Capture:   {Sig: "capture(s string, re string) map<string>?", Doc: "the named groups of the first match of re in s, or null when it does not match: a group that took no part gives \"\", and a name on several groups (one per alternative) is one key, holding the group that matched", Regex: true},
	ReplaceRe: {Sig: "replace_re(s string, re string, repl string) string", Doc: "s with every match of re replaced by repl ($1, ${name} expand groups)", Regex: true},

	ToString:    {Sig: "to_string(v any?) string", Doc: `v as text: strings as they are, numbers and booleans formatted, null and absent as "", maps and arrays as JSON`},
	ToInt:       {Sig: "to_int(v any?) int?", Doc: "v converted to an int (floats truncate, strings parse, booleans 0/1), or null"},
	ToFloat:     {Sig: "to_float(v any?) float?", Doc: "v converted to a float (ints widen, strings parse), or null"},
	ToBool:      {Sig: "to_bool(v any?) bool?", Doc: `v converted to a bool ("true"/"false", 1/0), or null`},
	AsString:    {Sig: "as_string(v any?) string?", Doc: "v if it is a string, else null (no conversion)"},
	AsInt:       {Sig: "as_int(v any?) int?", Doc: "v if it is an int, else null (no conversion)"},
	AsFloat:     {Sig: "as_float(v any?) float?", Doc: "v if it is a float, else null (no conversion)"},
	AsBool:      {Sig: "as_bool(v any?) bool?", Doc: "v if it is a bool, else null (no conversion)"},
	AsMap:       {Sig: "as_map(v any?) map<any>?", Doc: "v if it is a map (object), else null"},
	AsArray:     {Sig: "as_array(v any?) array<any>?", Doc: "v if it is an array, else null"},
	IsString:    isTest("is_string", "string"),
	IsInt:       isTest("is_int", "int"),
	IsFloat:     isTest("is_float", "float"),
	IsBool:      isTest("is_bool", "bool"),
	IsNull:      {Sig: "is_null(v any?) bool", Doc: "whether v is null or absent (as v == null)", Narrows: "null"},
	IsMap:       isTest("is_map", "map<any>"),
	IsArray:     isTest("is_array", "array<any>"),
	IsTimestamp: isTest("is_timestamp", "timestamp"),
	TypeOf:      {Sig: "type_of(v any?) string", Doc: `the name of v's runtime type: "null" (also when absent), "bool", "int", "float", "string", "bytes", "timestamp", "array" or "map"`},

	ParseJSON:   {Sig: "parse_json(s string) any?", Doc: "the JSON value s holds, or null when s is not JSON"},
	ParseKV:     {Sig: "parse_kv(s string, pair_sep string, kv_sep string) map<string>?", Doc: "s split into pairs on pair_sep and each pair into key and value on kv_sep, or null when a pair has no kv_sep"},
	ParseLogfmt: {Sig: "parse_logfmt(s string) map<string>?", Doc: "the key=value pairs of a logfmt line (quoted values unquoted), or null when s is not logfmt"},

	Now:        {Sig: "now() timestamp", Doc: "the current time, read once a batch: one time for all its records (fixed in tests)"},
	ParseTime:  {Sig: `parse_time(s string, layout string, tz string = "UTC") timestamp?`, Doc: "s read with a strftime layout (%Y-%m-%dT%H:%M:%S...) as a time in the constant IANA zone tz (unless s gives an offset), or null when it does not match", Const: "tz"},
	FormatTime: {Sig: `format_time(t timestamp, layout string, tz string = "UTC") string`, Doc: "t written with a strftime layout, in the constant IANA zone tz", Const: "tz"},
	UnixNanos:  {Sig: "unix_nanos(t timestamp) int", Doc: "nanoseconds since 1970-01-01T00:00:00Z"},

	Hash64:    {Sig: "hash64(s string) int", Doc: "the 64-bit FNV-1a hash of s shifted right by 11 bits (exact in a float64), for sampling"},
	Sha256Hex: {Sig: "sha256_hex(s string) string", Doc: "the SHA-256 of s's bytes in lower-case hex"},

	Exists:   {Sig: "exists(P path) bool", Doc: "whether the path P is present (even when it holds null)"},
	Keys:     {Sig: "keys(m map|object) array<string>", Doc: "the keys of m, in the record's order"},
	Coalesce: {Sig: "coalesce(a T?, b T?, ..., c T) T", Doc: "the first argument that is present and not null (a chain of ??)"},

	// encoding, hashing, network, log formats
	EncodeBase64: {Sig: "encode_base64(s string) string", Doc: "the bytes of s in standard base64 (RFC 4648, with padding)"},
	DecodeBase64: {Sig: "decode_base64(s string) string?", Doc: "the bytes standard base64 s holds (padding optional), or null when s is not base64"},
	EncodeHex:    {Sig: "encode_hex(s string) string", Doc: "the bytes of s in lower-case hex"},
	DecodeHex:    {Sig: "decode_hex(s string) string?", Doc: "the bytes hex s holds (either case), or null when s is not hex"},
	EncodeURL:    {Sig: "encode_url(s string) string", Doc: "s with every byte outside RFC 3986's unreserved set percent-encoded (space as %20)"},
	DecodeURL:    {Sig: "decode_url(s string) string?", Doc: "s with every %XX decoded (+ left as it is), or null on a malformed escape"},

	MD5Hex:        {Sig: "md5_hex(s string) string", Doc: "the MD5 of s's bytes in lower-case hex"},
	SHA1Hex:       {Sig: "sha1_hex(s string) string", Doc: "the SHA-1 of s's bytes in lower-case hex"},
	SHA512Hex:     {Sig: "sha512_hex(s string) string", Doc: "the SHA-512 of s's bytes in lower-case hex"},
	HMACSHA256Hex: {Sig: "hmac_sha256_hex(s string, key string) string", Doc: "the HMAC-SHA-256 of s's bytes under key, in lower-case hex"},
	XXHash64:      {Sig: "xxhash64(s string) int", Doc: "the XXH64 hash (seed 0) of s shifted right by 11 bits (exact in a float64)"},

	IPInCIDR:   {Sig: "ip_in_cidr(ip string, cidr string) bool", Doc: "whether ip is an address in the CIDR block cidr (false when ip is not an IP address)"},
	IsIPv4:     {Sig: "is_ipv4(s string) bool", Doc: "whether s is an IPv4 address in dotted decimal"},
	IsIPv6:     {Sig: "is_ipv6(s string) bool", Doc: "whether s is an IPv6 address"},
	ParseURL:   {Sig: "parse_url(s string) {scheme: string, user: string, host: string, port: int?, path: string, query: map<string>, fragment: string}?", Doc: "the parts of the absolute URL s, decoded, or null when s is not one"},
	ParseQuery: {Sig: "parse_query(s string) map<string>?", Doc: "the key=value pairs of a URL query string, decoded (+ as a space), or null on a malformed escape"},

	ParseCommonLog: {Sig: "parse_common_log(s string) map<any>?", Doc: "the fields of a Common Log Format line (host identity user timestamp message method path protocol status size), or null when s is not one"},
	ParseSyslog:    {Sig: "parse_syslog(s string) map<any>?", Doc: "the fields of an RFC 5424 or RFC 3164 syslog line (facility severity version timestamp hostname appname procid msgid message), or null when s is not one"},
	ParseGrok:      {Sig: "parse_grok(s string, pattern string) map<string>?", Doc: "the named fields of the first match in s of the constant grok pattern (%{NAME:field} over the built-in library), or null when it does not match", Grok: true},
	ParseCSV:       {Sig: `parse_csv(s string, sep string = ",") array<string>?`, Doc: "the fields of one CSV record (RFC 4180 quoting) separated by the one byte sep, or null when s is not one"},

	// time, maps, arrays, strings, numbers, OTLP, identity
	UnixSeconds:   {Sig: "unix_seconds(t timestamp) int", Doc: "whole seconds since 1970-01-01T00:00:00Z, rounded down"},
	UnixMillis:    {Sig: "unix_millis(t timestamp) int", Doc: "whole milliseconds since 1970-01-01T00:00:00Z, rounded down"},
	FromUnix:      {Sig: `from_unix(n int|float, unit string = "s") timestamp`, Doc: "the time n units after 1970-01-01T00:00:00Z, unit the constant s, ms, us or ns", Const: "unit"},
	ParseDuration: {Sig: "parse_duration(s string) int?", Doc: "the nanoseconds of a Go duration (300ms, -1.5h, 2h45m), or null when s is not one"},

	Merge:     {Sig: "merge(a map|object, b map|object) map|object", Doc: "a with b's keys added, b's values winning (shallow): a's keys in order, then b's new ones"},
	Flatten:   {Sig: `flatten(m map|object, sep string = ".") map`, Doc: "m with nested maps replaced by their leaves, keyed by the path of keys joined with sep"},
	Unflatten: {Sig: `unflatten(m map|object, sep string = ".") map<any>`, Doc: "m with each key split on sep into a path of nested maps (later keys win)"},
	KeepKeys:  {Sig: "keep_keys(m map|object, re string) map|object", Doc: "m with only the keys the constant RE2 pattern re matches", Regex: true},
	DropKeys:  {Sig: "drop_keys(m map|object, re string) map|object", Doc: "m without the keys the constant RE2 pattern re matches", Regex: true},
	Values:    {Sig: "values(m map|object) array", Doc: "the values of m, in the record's order"},

	Append:   {Sig: "append(a array<T>, v T) array<T>", Doc: "a with v added at the end"},
	Includes: {Sig: "includes(a array<T>, v T?) bool", Doc: "whether an element of a equals v (as == compares)"},
	Unique:   {Sig: "unique(a array<T>) array<T>", Doc: "a without the elements equal to an earlier one (as == compares)"},
	Slice:    {Sig: "slice(a array<T>, start int, end int) array<T>", Doc: "the elements of a from start up to end, both clamped to [0, len(a)]"},

	Format:     {Sig: "format(fmt string, args ...) string", Doc: "the constant fmt with its verbs (%s %d %f %v %q %x) replaced by the arguments, checked against their types", Const: "fmt"},
	Truncate:   {Sig: "truncate(s string, n int) string", Doc: "the longest prefix of s of at most n bytes that does not split a UTF-8 character"},
	TrimPrefix: {Sig: "trim_prefix(s string, prefix string) string", Doc: "s without prefix at its start, if it is there"},
	TrimSuffix: {Sig: "trim_suffix(s string, suffix string) string", Doc: "s without suffix at its end, if it is there"},
	IndexOf:    {Sig: "index_of(s string, sub string) int", Doc: "the byte offset of the first sub in s, or -1 when there is none"},

	Round: {Sig: "round(x int|float, digits int = 0) float", Doc: "x rounded to digits decimal places, halves away from zero"},
	Floor: {Sig: "floor(x int|float) int", Doc: "the greatest int not above x"},
	Ceil:  {Sig: "ceil(x int|float) int", Doc: "the least int not below x"},
	Abs:   {Sig: "abs(n int|float) int|float", Doc: "the absolute value of n, of n's type"},
	Min:   {Sig: "min(a int|float, b int|float) int|float", Doc: "the smaller of a and b (an int if both are)"},
	Max:   {Sig: "max(a int|float, b int|float) int|float", Doc: "the greater of a and b (an int if both are)"},

	SeverityNumber: {Sig: "severity_number(text string) int", Doc: "the OTLP severity number of a level name (info 9, WARN 13, E 17, ...), case-insensitive; 0 when unknown"},

	UUIDv4: {Sig: "uuid_v4() string", Doc: "a random (version 4) UUID (fixed in tests)"},
	UUIDv7: {Sig: "uuid_v7() string", Doc: "a time-ordered (version 7) UUID of now() and random bits (fixed in tests)"},
}

func isTest(name, t string) Func {
	return Func{Sig: name + "(v any?) bool", Doc: "whether v is present and is " + article(t), Narrows: t}
}

var byName = map[string]*Func{}

func init() {
	for id := Invalid + 1; id < NumIDs; id++ {
		f := &table[id]
		f.ID = id
		if err := f.parseSig(); err != nil {
			panic("builtin: " + err.Error())
		}
		if byName[f.Name] != nil {
			panic("builtin: duplicate " + f.Name)
		}
		byName[f.Name] = f
	}
}

// parseSig fills in Name, Params, Result, RegexArg, PathArg and ConstArg
// from Sig.
func (f *Func) parseSig() error {
	open, close := strings.IndexByte(f.Sig, '('), strings.LastIndexByte(f.Sig, ')')
	if open <= 0 || close < open {
		return fmt.Errorf("signature %q is not name(params) result", f.Sig)
	}
	f.Name = f.Sig[:open]
	f.Result = strings.TrimSpace(f.Sig[close+1:])
	f.RegexArg, f.PathArg, f.ConstArg = -1, -1, -1
	if list := f.Sig[open+1 : close]; list != "" {
		for i, p := range strings.Split(list, ", ") {
			p, def, _ := strings.Cut(p, " = ")
			name, typ, ok := strings.Cut(p, " ")
			if !ok {
				name, typ = "", p
			}
			if def == "" && len(f.Params) > 0 && f.Params[len(f.Params)-1].Default != "" {
				return fmt.Errorf("%s: parameter %s without a default after one with a default", f.Name, name)
			}
			if _, err := strconv.Unquote(def); def != "" && err != nil {
				if _, err := strconv.ParseInt(def, 10, 64); err != nil {
					return fmt.Errorf("%s: default %s is not a string or an int", f.Name, def)
				}
			}
			f.Params = append(f.Params, Param{Name: name, Type: typ, Default: def})
			if typ == "path" {
				f.PathArg = i
			}
			if f.Regex && name == "re" || f.Grok && name == "pattern" {
				f.RegexArg = i
			}
			if f.Const != "" && name == f.Const {
				f.ConstArg = i
			}
		}
	}
	if f.Result == "" || f.Doc == "" {
		return fmt.Errorf("%s: no result type or doc line", f.Name)
	}
	if (f.Regex || f.Grok) && f.RegexArg < 0 {
		return fmt.Errorf("%s: Regex or Grok set but no parameter named re or pattern", f.Name)
	}
	if f.Const != "" && f.ConstArg < 0 {
		return fmt.Errorf("%s: Const names %s, which is no parameter", f.Name, f.Const)
	}
	return nil
}

// Lookup returns the built-in called name, or nil.
func Lookup(name string) *Func { return byName[name] }

// ByID returns the built-in with the given ID, or nil.
func ByID(id ID) *Func {
	if id > Invalid && id < NumIDs {
		return &table[id]
	}
	return nil
}

// All returns every built-in in ID order.
func All() []*Func {
	out := make([]*Func, 0, NumIDs-1)
	for id := Invalid + 1; id < NumIDs; id++ {
		out = append(out, &table[id])
	}
	return out
}

// Names returns every built-in's name, sorted (for "did you mean" hints).
func Names() []string {
	var out []string
	for _, f := range All() {
		out = append(out, f.Name)
	}
	sort.Strings(out)
	return out
}

// RegexArg is the index of id's regex parameter, or -1 (also for an ID
// that is no built-in): the VM's hot path asks by ID.
func (id ID) RegexArg() int {
	if f := ByID(id); f != nil {
		return f.RegexArg
	}
	return -1
}

func (id ID) String() string {
	if f := ByID(id); f != nil {
		return f.Name
	}
	return fmt.Sprintf("builtin(%d)", id)
}

// article puts "a" or "an" before a type's name.
func article(t string) string {
	if strings.ContainsRune("aeiou", rune(t[0])) {
		return "an " + t
	}
	return "a " + t
}
