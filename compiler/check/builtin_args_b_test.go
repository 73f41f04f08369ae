package check

import T "github.com/policyrun/policyrun/compiler/types"

// partBSignatures are TestSignatures' cases for the built-ins of §12, part B.
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
}
