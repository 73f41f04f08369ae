package output

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/policyrun/policyrun/record"
)

// PlainMapping says how the otlp output makes a LogRecord of a plain record
// (one read from a file), with the keys of Fluent Bit's opentelemetry
// output: which of the record's top-level keys holds the body, the
// severity and the trace context. Without them the record's map is the
// body (docs/otlp.md, "Conversions"). OTLP records go as they are.
type PlainMapping struct {
	BodyKey           string // logs_body_key: this key's value is the body
	BodyKeyAttributes bool   // logs_body_key_attributes: the other keys become attributes
	SeverityTextKey   string // logs_severity_text_message_key
	SeverityNumberKey string // logs_severity_number_message_key
	TraceIDKey        string // logs_trace_id_message_key
	SpanIDKey         string // logs_span_id_message_key
}

func (m *PlainMapping) keys(keys map[string]func(*yaml.Node), v Values) {
	key := func(dst *string) func(*yaml.Node) {
		return func(n *yaml.Node) {
			// Fluent Bit writes record accessors: $log. Only top-level
			// keys are looked up.
			*dst = strings.TrimPrefix(v.Str(n), "$")
			if strings.ContainsAny(*dst, "[]") {
				v.Errorf(n.Line, "%q: only a top-level key of the record ($log, log) can be named", n.Value)
			}
		}
	}
	keys["logs_body_key"] = key(&m.BodyKey)
	keys["logs_body_key_attributes"] = func(n *yaml.Node) { m.BodyKeyAttributes = v.Bool(n) }
	keys["logs_severity_text_message_key"] = key(&m.SeverityTextKey)
	keys["logs_severity_number_message_key"] = key(&m.SeverityNumberKey)
	keys["logs_trace_id_message_key"] = key(&m.TraceIDKey)
	keys["logs_span_id_message_key"] = key(&m.SpanIDKey)
}

func (m *PlainMapping) set() bool { return *m != PlainMapping{} }

// mapPlain returns r as an OTLP record made as m says, in r's arena (the
// caller holds it: a Write runs on its input's goroutine), or r itself
// when it is an OTLP record.
func (m *PlainMapping) mapPlain(r *record.Record) *record.Record {
	if r.IsOTLP() || r.Root().Kind() != record.Map {
		return r
	}
	a, root := r.Arena(), r.Root()
	var body record.Value
	var bodyKey bool
	if m.BodyKey != "" {
		body, bodyKey = r.Get(record.NewPath(m.BodyKey))
	}
	if !bodyKey {
		body = root
	}
	o := a.NewOTLPRecord(body)
	used := func(k string) bool {
		return bodyKey && k == m.BodyKey || k != "" && (k == m.SeverityTextKey || k == m.SeverityNumberKey || k == m.TraceIDKey || k == m.SpanIDKey)
	}
	if bodyKey && m.BodyKeyAttributes {
		attrs := a.BeginMap(8)
		for it := a.Iter(root); it.Next(); {
			if !used(a.Str(it.Key())) {
				attrs.Add(it.Key(), it.Value())
			}
		}
		o.Set(record.OTLPPath(record.ViewAttributes), attrs.Finish())
	}
	// Ids that are not hex of their length are left out by the encoders.
	field := func(key string, id record.ViewID) {
		if key == "" {
			return
		}
		if v, ok := r.Get(record.NewPath(key)); ok && v.Kind() == record.OTLPView()[id].Kind {
			o.Set(record.OTLPPath(id), v)
		}
	}
	field(m.SeverityTextKey, record.ViewSeverityText)
	field(m.SeverityNumberKey, record.ViewSeverityNumber)
	field(m.TraceIDKey, record.ViewTraceID)
	field(m.SpanIDKey, record.ViewSpanID)
	o.SetTime(r.Time())
	return o
}
