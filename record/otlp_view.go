package record

// This file defines the view of an OTLP log record (docs/otlp.md): the
// fixed keys of its root map, in their order, with the kind each holds.
// The codecs build and read records by it, CheckOTLP validates edits
// against it, and the compiler's checker types `schema otlp` from it.

// ViewField is one fixed key of the OTLP view.
type ViewField struct {
	Name string
	// Kind is what the key holds: Absent means any value (the body);
	// Map with Fields is a closed object (resource, scope); Map without
	// Fields is a map of any values (the attributes).
	Kind   Kind
	Fields []ViewField
	// ID is the key's slot: the decoders build the root in slot order
	// and CheckOTLP and the encoder switch on it.
	ID viewID
	// HexLen is, for the trace and span ids, the length in bytes of the id
	// that the key holds as lower-case hex.
	HexLen int
}

// Refinable reports whether a schema may declare a type for the key: the
// body and the attribute maps; the others have the one type the view gives.
func (f *ViewField) Refinable() bool {
	return f.Kind == Absent || f.Kind == Map && f.Fields == nil
}

type viewID uint8

// The slots of the view. The values are the order of the keys in a decoded
// record's root map (and within resource and scope).
const (
	vBody viewID = iota
	vAttributes
	vSeverityText
	vSeverityNumber
	vObservedTime
	vTraceID
	vSpanID
	vFlags
	vEventName
	vDropped
	vResource
	vScope
	numRootFields
)

const (
	vResAttributes viewID = iota
	vResDropped
	vResSchemaURL
	numResourceFields
)

const (
	vScopeName viewID = iota
	vScopeVersion
	vScopeAttributes
	vScopeDropped
	vScopeSchemaURL
	numScopeFields
)

var resourceView = []ViewField{
	{Name: "attributes", Kind: Map, ID: vResAttributes},
	{Name: "dropped_attributes_count", Kind: Int, ID: vResDropped},
	{Name: "schema_url", Kind: String, ID: vResSchemaURL},
}

var scopeView = []ViewField{
	{Name: "name", Kind: String, ID: vScopeName},
	{Name: "version", Kind: String, ID: vScopeVersion},
	{Name: "attributes", Kind: Map, ID: vScopeAttributes},
	{Name: "dropped_attributes_count", Kind: Int, ID: vScopeDropped},
	{Name: "schema_url", Kind: String, ID: vScopeSchemaURL},
}

var rootView = []ViewField{
	{Name: "body", Kind: Absent, ID: vBody},
	{Name: "attributes", Kind: Map, ID: vAttributes},
	{Name: "severity_text", Kind: String, ID: vSeverityText},
	{Name: "severity_number", Kind: Int, ID: vSeverityNumber},
	{Name: "observed_time", Kind: Timestamp, ID: vObservedTime},
	{Name: "trace_id", Kind: String, ID: vTraceID, HexLen: 16},
	{Name: "span_id", Kind: String, ID: vSpanID, HexLen: 8},
	{Name: "flags", Kind: Int, ID: vFlags},
	{Name: "event_name", Kind: String, ID: vEventName},
	{Name: "dropped_attributes_count", Kind: Int, ID: vDropped},
	{Name: "resource", Kind: Map, Fields: resourceView, ID: vResource},
	{Name: "scope", Kind: Map, Fields: scopeView, ID: vScope},
}

// OTLPView returns the fixed keys of an OTLP record's root map, in order.
// The slice is shared: do not modify it.
func OTLPView() []ViewField { return rootView }
