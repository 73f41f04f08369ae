package check

import T "github.com/policyrun/policyrun/compiler/types"

// partBSignatures are TestSignatures' cases for the encoding, hashing, network and log-format built-ins (docs/language.md).
var partBSignatures = []struct {
	name   string
	args   []*T.Type
	result string // "" to skip
	reason argReason
	ok     bool
}{
	{"encode_base64", []*T.Type{str}, "string", 0, true},
	{"encode_base64", []*T.Type{i64}, "", badType, false},
	{"decode_base64", []*T.Type{str}, "string?", 0, true},
	{"decode_base64", []*T.Type{strOpt}, "", notPresent, false},
	{"encode_hex", []*T.Type{str}, "string", 0, true},
	{"decode_hex", []*T.Type{str}, "string?", 0, true},
	{"encode_url", []*T.Type{str}, "string", 0, true},
	{"decode_url", []*T.Type{str}, "string?", 0, true},
	{"decode_url", []*T.Type{str, str}, "", badCount, false},
	{"md5_hex", []*T.Type{str}, "string", 0, true},
	{"sha1_hex", []*T.Type{str}, "string", 0, true},
	{"sha512_hex", []*T.Type{str}, "string", 0, true},
	{"hmac_sha256_hex", []*T.Type{str, str}, "string", 0, true},
	{"hmac_sha256_hex", []*T.Type{str}, "", badCount, false},
	{"hmac_sha256_hex", []*T.Type{str, T.AnyType}, "", needsNarrow, false},
	{"xxhash64", []*T.Type{str}, "int", 0, true},
	{"xxhash64", []*T.Type{T.AnyType}, "", needsNarrow, false},
	{"ip_in_cidr", []*T.Type{str, str}, "bool", 0, true},
	{"ip_in_cidr", []*T.Type{strOpt, str}, "", notPresent, false},
	{"is_ipv4", []*T.Type{str}, "bool", 0, true},
	{"is_ipv6", []*T.Type{str}, "bool", 0, true},
	{"is_ipv6", []*T.Type{anyOpt}, "", needsNarrow, false},
	{"parse_url", []*T.Type{str}, "{scheme: string, user: string, host: string, port: int?, path: string, query: map<string>, fragment: string}?", 0, true},
	{"parse_query", []*T.Type{str}, "map<string>?", 0, true},
	{"parse_csv", []*T.Type{str}, "array<string>?", 0, true},
	{"parse_csv", []*T.Type{str, str}, "array<string>?", 0, true},
	{"parse_csv", []*T.Type{str, i64}, "", badType, false},
	{"parse_csv", []*T.Type{}, "", badCount, false},
	{"parse_csv", []*T.Type{str, str, str}, "", badCount, false},
	{"parse_common_log", []*T.Type{str}, "map<any>?", 0, true},
	{"parse_syslog", []*T.Type{str}, "map<any>?", 0, true},
	{"parse_syslog", []*T.Type{strOpt}, "", notPresent, false},
	{"parse_grok", []*T.Type{str, str}, "map<string>?", 0, true},
	{"parse_grok", []*T.Type{str}, "", badCount, false},
}
