package difftest

import (
	"strings"
	"testing"

	"github.com/policyrun/policyrun/compiler/diag"
)

// TestGeneratorPartB: the expressions of exprB check, so that the policies
// that use them are compared rather than skipped, and they do occur.
func TestGeneratorPartB(t *testing.T) {
	names := []string{"encode_", "decode_", "_hex(", "xxhash64", "ip_in_cidr", "is_ipv", "parse_url", "parse_query",
		"parse_syslog", "parse_common_log", "parse_grok", "parse_csv"}
	used, bad := 0, 0
	for seed := range uint64(400) {
		src := Policy(seed)
		has := false
		for _, n := range names {
			has = has || strings.Contains(src, n)
		}
		if !has {
			continue
		}
		used++
		_, _, diags, _ := parseCheck(src)
		lines := strings.Split(src, "\n")
		for _, d := range diags {
			if d.Severity != diag.Error || d.Pos.Line < 1 || d.Pos.Line > len(lines) {
				continue
			}
			line := lines[d.Pos.Line-1]
			for _, n := range names {
				if strings.Contains(line, n) {
					bad++
					if bad <= 5 {
						t.Logf("seed %d: %v\n%s", seed, d, line)
					}
					break
				}
			}
		}
	}
	// The generator makes some ill-typed expressions anyway (an any
	// compared with a string): a line with an error and a built-in of part
	// B is most often one of those.
	if bad*20 > used {
		t.Errorf("%d of %d policies that use part B have an error on such a line", bad, used)
	}
	if used < 100 {
		t.Errorf("only %d of 400 policies use a built-in of part B", used)
	}
	t.Logf("%d of 400 policies use part B, %d of them do not check", used, bad)
}
