package record

import (
	"testing"

	common "go.opentelemetry.io/proto/otlp/common/v1"
	logs "go.opentelemetry.io/proto/otlp/logs/v1"
	resource "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// TestOTLPModelIsOpenTelemetryProto holds the model's messages to
// opentelemetry-proto's, as protobuf-go generated them: every field by
// number, with its wire type and both names, in declaration order, and no
// field of theirs left out.
func TestOTLPModelIsOpenTelemetryProto(t *testing.T) {
	for _, c := range []struct {
		ours   *protoMessage
		theirs protoreflect.MessageDescriptor
	}{
		// LogsData is ExportLogsServiceRequest's twin (logs.proto says
		// so), and has none of the collector package's gRPC imports.
		{&requestMsg, (&logs.LogsData{}).ProtoReflect().Descriptor()},
		{&resourceLogsMsg, (&logs.ResourceLogs{}).ProtoReflect().Descriptor()},
		{&scopeLogsMsg, (&logs.ScopeLogs{}).ProtoReflect().Descriptor()},
		{&resourceMsg, (&resource.Resource{}).ProtoReflect().Descriptor()},
		{&entityRefMsg, (&common.EntityRef{}).ProtoReflect().Descriptor()},
		{&scopeMsg, (&common.InstrumentationScope{}).ProtoReflect().Descriptor()},
		{&logRecordMsg, (&logs.LogRecord{}).ProtoReflect().Descriptor()},
		{&keyValueMsg, (&common.KeyValue{}).ProtoReflect().Descriptor()},
		{&anyValueMsg, (&common.AnyValue{}).ProtoReflect().Descriptor()},
		{&arrayValueMsg, (&common.ArrayValue{}).ProtoReflect().Descriptor()},
		{&kvListMsg, (&common.KeyValueList{}).ProtoReflect().Descriptor()},
	} {
		m, d := c.ours, c.theirs
		if string(d.Name()) != m.name && m != &requestMsg {
			t.Errorf("%s is %s", m.name, d.Name())
		}
		if len(m.fields) != d.Fields().Len() {
			t.Errorf("%s: %d fields, opentelemetry-proto has %d", m.name, len(m.fields), d.Fields().Len())
		}
		for i, f := range m.fields {
			fd := d.Fields().ByNumber(protoreflect.FieldNumber(f.num))
			switch {
			case fd == nil:
				t.Errorf("%s: no field %d (%s)", m.name, f.num, f.name)
			case string(fd.Name()) != f.name || fd.JSONName() != f.json:
				t.Errorf("%s field %d: %s/%s, want %s/%s", m.name, f.num, f.name, f.json, fd.Name(), fd.JSONName())
			case wireOf(fd.Kind()) != f.wire:
				t.Errorf("%s.%s: wire type %d, want %d", m.name, f.name, f.wire, wireOf(fd.Kind()))
			case fd.Index() != i:
				t.Errorf("%s.%s: declared %dth, listed %dth", m.name, f.name, fd.Index(), i)
			}
		}
	}
	// The view's keys name the fields that hold them (but for
	// observed_time, which the view shortens).
	held := func(m *protoMessage, group string, fields []ViewField) {
		for _, f := range fields {
			in := m
			if f.Name == "schema_url" { // the group's own, not its head's
				in = map[string]*protoMessage{"resource": &resourceLogsMsg, "scope": &scopeLogsMsg}[group]
			}
			if f.Fields == nil && in.byNum.name[f.num] != f.Name && f.ID != ViewObservedTime {
				t.Errorf("%s.%s is held by %s", group, f.Name, in.what(f.num))
			}
		}
	}
	held(&logRecordMsg, "", rootView)
	held(&resourceMsg, "resource", resourceView)
	held(&scopeMsg, "scope", scopeView)
}

func wireOf(k protoreflect.Kind) int {
	switch k {
	case protoreflect.DoubleKind, protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		return wireFixed64
	case protoreflect.FloatKind, protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
		return wireFixed32
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return wireBytes
	}
	return wireVarint
}

// TestValidID: an id is "" or hex of its length in either case, the rule
// of docs/otlp.md that CheckOTLP, the view's JSON, the encoders and the
// Collector processor all read.
func TestValidID(t *testing.T) {
	trace, span := &rootView[ViewTraceID], &rootView[ViewSpanID]
	for _, c := range []struct {
		f  *ViewField
		s  string
		ok bool
	}{
		{trace, "", true},
		{span, "", true},
		{trace, "0102030405060708090a0b0c0d0e0f10", true},
		{trace, "0102030405060708090A0B0C0D0E0F10", true},
		{trace, "00000000000000000000000000000000", true},
		{span, "aAbBcCdDeEfF0011", true},
		{span, "0102030405060708090a0b0c0d0e0f10", false}, // a trace id's length
		{trace, "0102030405060708", false},
		{span, "010203040506070", false},
		{span, "01020304050607g8", false},
		{span, "0x02030405060708", false},
		{span, " 102030405060708", false},
	} {
		if got := c.f.ValidID(c.s); got != c.ok {
			t.Errorf(".%s %q: ValidID %v, want %v", c.f.Name, c.s, got, c.ok)
		}
	}
}
