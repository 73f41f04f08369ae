package record_test

import (
	"fmt"
	"log"

	"github.com/policyrun/policyrun/record"
)

// A batch: decode lines into one arena, read and edit each record, encode
// the results, then Reset the arena for the next batch.
func Example() {
	lines := [][]byte{
		[]byte(`{"level":"info","status":200,"kubernetes":{"pod":"web-1","ns":"shop"}}`),
		[]byte(`{"level":"debug","status":500}`),
	}
	// Paths are built once, when a policy is compiled.
	status := record.NewPath("status")
	level := record.NewPath("level")
	k8s := record.NewPath("kubernetes")

	a := record.NewArena()
	var out []byte
	for _, line := range lines {
		r, err := a.DecodeJSON(line, record.Referenced)
		if err != nil {
			fmt.Println(err)
			continue
		}
		if v, ok := r.Get(status); ok && v.Kind() == record.Int && v.Int() >= 500 {
			r.Set(level, a.NewStringFrom("error"))
		}
		r.Lift(k8s, []byte("k8s_"))
		out = r.AppendJSON(out[:0])
		fmt.Println(string(out))
	}
	a.Reset()
	// Output:
	// {"level":"info","status":200,"k8s_pod":"web-1","k8s_ns":"shop"}
	// {"level":"error","status":500}
}

// Strings made at run time are written into the arena's slab.
func ExampleStringBuilder() {
	a := record.NewArena()
	r, err := a.DecodeJSON([]byte(`{"user":"Alice","host":"web"}`), record.Owned)
	if err != nil {
		log.Fatal(err)
	}
	user, _ := r.Get(record.NewPath("user"))
	host, _ := r.Get(record.NewPath("host"))
	sb := a.StringBuilder()
	sb.Start()
	sb.WriteBytes(a.Bytes(user))
	sb.WriteByte('@')
	sb.WriteBytes(a.Bytes(host))
	r.Set(record.NewPath("who"), sb.End())
	fmt.Println(string(r.AppendJSON(nil)))
	// Output: {"user":"Alice","host":"web","who":"Alice@web"}
}

// Malformed input is a *DecodeError with a cause and a byte offset.
func ExampleDecodeError() {
	a := record.NewArena()
	_, err := a.DecodeJSON([]byte(`{"a":1,"b":tru}`), record.Referenced)
	fmt.Println(err)
	// Output: record: syntax error at byte 11: invalid literal
}
