package record

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestDecodeOTLPJSONQuickKeyValue holds the quick path for KeyValues in
// the encoders' layout to the general path: each attribute list is
// decoded as it is, and with a space after every KeyValue's '{', which
// the quick path does not take. Both give the same records, or both fail
// with the same kind of error.
func TestDecodeOTLPJSONQuickKeyValue(t *testing.T) {
	for _, tt := range []struct {
		name, attrs string
		fails       bool
	}{
		{"string", `{"key":"a","value":{"stringValue":"b"}}`, false},
		{"escapes", `{"key":"a\"b\u00e9","value":{"stringValue":"x\n\ty\\"}}`, false},
		{"utf-8", `{"key":"ключ","value":{"stringValue":"значение ✓"}}`, false},
		{"empty strings", `{"key":"","value":{"stringValue":""}}`, false},
		{"int string", `{"key":"i","value":{"intValue":"-42"}}`, false},
		{"int number", `{"key":"i","value":{"intValue":42}}`, false},
		{"int exponent", `{"key":"i","value":{"intValue":1e3}}`, false},
		{"int min", `{"key":"i","value":{"intValue":"-9223372036854775808"}}`, false},
		{"bool", `{"key":"t","value":{"boolValue":true}},{"key":"f","value":{"boolValue":false}}`, false},
		{"double", `{"key":"d","value":{"doubleValue":1.5}},{"key":"e","value":{"doubleValue":-2e-3}}`, false},
		{"double strings", `{"key":"n","value":{"doubleValue":"NaN"}},{"key":"i","value":{"doubleValue":"-Infinity"}}`, false},
		{"null value", `{"key":"a","value":{"stringValue":null}}`, false},
		{"no value", `{"key":"a","value":{}}`, false},
		{"value first", `{"value":{"stringValue":"b"},"key":"a"}`, false},
		{"proto names", `{"key":"a","value":{"string_value":"b"}}`, false},
		{"container", `{"key":"m","value":{"kvlistValue":{"values":[{"key":"x","value":{"intValue":"1"}}]}}}`, false},
		{"unknown field", `{"key":"a","value":{"stringValue":"b"},"x":1}`, false},
		{"a key twice", `{"key":"a","value":{"stringValue":"b"}},{"key":"a","value":{"stringValue":"c"}}`, false},
		{"two values", `{"key":"a","value":{"stringValue":"b","intValue":"1"}}`, true},
		{"key field twice", `{"key":"a","key":"b","value":{"stringValue":"c"}}`, true},
		{"int overflow", `{"key":"i","value":{"intValue":"9223372036854775808"}}`, true},
		{"int fraction", `{"key":"i","value":{"intValue":1.5}}`, true},
		{"bool string", `{"key":"t","value":{"boolValue":"true"}}`, true},
		{"string number", `{"key":"s","value":{"stringValue":1}}`, true},
		{"bad utf-8", "{\"key\":\"a\",\"value\":{\"stringValue\":\"\xff\"}}", true},
		{"control character", "{\"key\":\"a\",\"value\":{\"stringValue\":\"\x01\"}}", true},
		{"bad escape", `{"key":"a","value":{"stringValue":"\q"}}`, true},
		{"cut", `{"key":"a","value":{"stringValue":"b"}`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := func(attrs string) []byte {
				return []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[` + attrs + `],"body":{"stringValue":"x"}}]}]}]}`)
			}
			decode := func(b []byte) ([]byte, error) {
				a := NewArena()
				recs, err := a.DecodeOTLPJSON(b, Referenced, nil)
				if err != nil {
					return nil, err
				}
				var e OTLPEncoder
				return e.AppendJSON(nil, recs), nil
			}
			quick, qerr := decode(req(tt.attrs))
			general, gerr := decode(req(strings.ReplaceAll(tt.attrs, `{"key"`, `{ "key"`)))
			if (qerr != nil) != tt.fails || (gerr != nil) != tt.fails {
				t.Fatalf("errors: quick %v, general %v; want failure %v", qerr, gerr, tt.fails)
			}
			if tt.fails {
				var qe, ge *DecodeError
				if !errors.As(qerr, &qe) || !errors.As(gerr, &ge) || qe.Err != ge.Err {
					t.Errorf("errors differ: quick %v, general %v", qerr, gerr)
				}
				return
			}
			if !bytes.Equal(quick, general) {
				t.Errorf("records differ:\nquick   %s\ngeneral %s", quick, general)
			}
		})
	}
}

// TestDecodeOTLPJSONQuickCut decodes every prefix of a request of
// KeyValues in the quick layout: each fails, none reads past the end.
func TestDecodeOTLPJSONQuickCut(t *testing.T) {
	req := `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[` +
		`{"key":"s","value":{"stringValue":"v"}},{"key":"i","value":{"intValue":"1"}},` +
		`{"key":"b","value":{"boolValue":true}},{"key":"d","value":{"doubleValue":1.5}}]}]}]}]}`
	a := NewArena()
	if _, err := a.DecodeOTLPJSON([]byte(req), Owned, nil); err != nil {
		t.Fatal(err)
	}
	for n := range len(req) {
		a.Reset()
		if recs, err := a.DecodeOTLPJSON([]byte(req[:n]), Owned, nil); err == nil {
			t.Errorf("%d bytes: %d records, no error", n, len(recs))
		}
	}
}
