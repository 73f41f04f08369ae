package compiler

import (
	"fmt"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/racedetect"
	"github.com/policyrun/policyrun/spec"
)

// TestPartAAllocateNothing: the built-ins of docs/language.md's first groups, whose
// results fit the arena allocate nothing per record on the VM once the
// arena and the machine have grown.
func TestPartAAllocateNothing(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("allocation counts do not hold under the race detector (sync.Pool drops items)")
	}
	for _, tt := range []struct{ name, stmts string }{
		{"time", `set .a = format_time(parse_time(.ts, "%Y-%m-%d %H:%M:%S", "Europe/Paris") ?? now(), "%F %T %Z", "America/New_York")
set .b = unix_seconds(now()) + unix_millis(from_unix(.n, "ms")) + (parse_duration(.d) ?? 0)
set .c = from_unix(.f)`},
		{"maps", `set .a = merge(.m, {"x": .user})
set .b = unflatten(flatten({"k": .m, "l": {"z": 1}}))
set .c = values(keep_keys(.m, "^a"))
set .d = drop_keys(.m, "^a")`},
		{"arrays", `set .a = unique(.tags + ["b1", "z"])
set .b = append(slice(.tags, 1, 5), .user)
set .c = includes(.tags, "a")`},
		{"strings", `set .a = format("%s took %5dms (%.2f) %x %q", .user, .n, .f, .n, .user)
set .b = format("%v|%v|%v", .n, .f, .tags)
set .c = truncate(.user, 3) + trim_prefix(.user, "User_") + trim_suffix(.user, "_X")
set .d = index_of(.user, "_")`},
		{"numbers", `set .a = round(.f, 2) + round(.f) + abs(.f) + min(.f, 2) + max(.n, 1)
set .b = floor(.f) + ceil(.f) + abs(.n) + min(.n, 3)`},
		{"otlp and identity", `set .a = severity_number(.user) + severity_number("WARN")
set .b = uuid_v4()
set .c = uuid_v7()`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			prog := compile(t, `policy "allocs"
schema {
  user: string
  n: int
  f: float
  ts: string
  d: string
  tags: array<string>
  m: map<string>
  ...
}
`+tt.stmts+"\n")
			var lines [][]byte
			for i := range 50 {
				lines = append(lines, fmt.Appendf(nil, `{"user":"User_%d_X","n":%d,"f":%d.5,"ts":"2026-07-0%d 12:00:00","d":"%dms","tags":["a","b%d","a"],"m":{"a.b":"%d","c":"x"}}`,
					i, i, i, i%9+1, i, i, i))
			}
			noAllocs(t, prog, lines, func(res spec.Result) bool { return !res.Faulted() })
		})
	}
}
