package compiler

import (
	"fmt"
	"testing"
)

// TestPartBAllocateNothing: the encoding, hashing, network and log-format built-ins (docs/language.md) build their
// strings, maps and arrays in the record's arena, so a policy of them
// allocates nothing per record once the arena and the machine have grown.
func TestPartBAllocateNothing(t *testing.T) {
	for _, tc := range []struct {
		name, stmts string
		line        func(i int) string
	}{
		{"encoding", `set .b = encode_base64(.user)
set .h = encode_hex(.user)
set .u = encode_url(.user)
set .d = decode_base64(.b) ?? ""
set .x = decode_hex(.h) ?? ""
set .y = decode_url(.u) ?? ""`, func(i int) string { return fmt.Sprintf(`{"user":"User %d/é"}`, i) }},
		{"hashing", `set .m = md5_hex(.user)
set .s1 = sha1_hex(.user)
set .s5 = sha512_hex(.user)
set .h = hmac_sha256_hex(.user, "key")
set .x = xxhash64(.user)`, func(i int) string { return fmt.Sprintf(`{"user":"user-%d"}`, i) }},
		{"network", `set .in = ip_in_cidr(.ip ?? "", "10.0.0.0/8")
set .v6 = is_ipv6(.ip ?? "")
set .u = parse_url(.user)
set .q = parse_query(.user)`, func(i int) string {
			return fmt.Sprintf(`{"user":"https://u@h.example:%d/a%%20b?x=%d&y=a+b#f","ip":"10.0.%d.1"}`, 8000+i, i, i)
		}},
		{"logs", `set .c = parse_csv(.user)
set .s = parse_syslog(.ip ?? "")
set .l = parse_common_log(.user)`, func(i int) string {
			if i%2 == 0 {
				return fmt.Sprintf(`{"user":"a,\"b\"\"c\",%d","ip":"<13>1 2020-03-13T20:45:38.119Z h app %d ID [x a=\"\\\"q\"] msg %d"}`, i, i, i)
			}
			return fmt.Sprintf(`{"user":"10.0.0.%d - bob [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.0\" 200 %d","ip":"<34>Oct 11 22:14:15 h su[%d]: x"}`, i, i, i)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prog := compile(t, "policy \"b\"\nschema {\n  user: string\n  ip: string?\n  ...\n}\n"+tc.stmts+"\n")
			var lines [][]byte
			for i := range 50 {
				lines = append(lines, []byte(tc.line(i)))
			}
			noAllocs(t, prog, lines, clean)
		})
	}
}
