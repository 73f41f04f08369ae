package policyrunprocessor

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/policyrun/policyrun/record"
)

// TestIDRuleIsRecords: the processor writes a trace or span id exactly
// when the engine's encoders would, by the one rule of record
// (ViewField.ValidID): "" or hex of the id's length, in either case.
func TestIDRuleIsRecords(t *testing.T) {
	for _, id := range []record.ViewID{record.ViewTraceID, record.ViewSpanID} {
		vf := &record.OTLPView()[id]
		hex := strings.Repeat("0a", vf.HexLen)
		cases := []string{"", hex, strings.ToUpper(hex), "Aa" + hex[2:], hex[2:], hex + "00", "x" + hex[1:], "0x" + hex[2:]}
		var recs []func(plog.LogRecord)
		for _, s := range cases {
			recs = append(recs, lrec(s, map[string]any{"id": s}))
		}
		p := newTest(t, "policy \"ids\" on_fault drop\nschema otlp\nset ."+vf.Name+" = as_string(.attributes.id) ?? \"\"\n")
		out, err := p.processLogs(context.Background(), one(recs...))
		if err != nil {
			t.Fatal(err)
		}
		kept := map[string]bool{}
		lrs := out.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		for i := range lrs.Len() {
			kept[lrs.At(i).Body().Str()] = true
		}
		for _, s := range cases {
			if kept[s] != vf.ValidID(s) {
				t.Errorf(".%s = %q: written %v, record.ValidID %v", vf.Name, s, kept[s], vf.ValidID(s))
			}
		}
	}
}
