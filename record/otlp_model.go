package record

import (
	"math"
	"strconv"
)

// The OTLP log model in one place (docs/otlp.md): the view, the fixed keys
// of an OTLP record's root map in their order with the kind each holds
// and the protobuf field that holds it; and the messages of
// opentelemetry-proto a logs request is made of, each field's number,
// wire type and names. The protobuf codec switches on the field numbers
// below, the JSON codec reads the names, CheckOTLP validates edits by the
// view, the compiler's checker types `schema otlp` from it, and the
// Collector processor maps it onto pdata.

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
	ID ViewID
	// HexLen is, for the trace and span ids, the length in bytes of the id
	// that the key holds as lower-case hex.
	HexLen int
	// Signed is, for an Int, that the field is an int32 on the wire; the
	// others are uint32s. A value outside its range cannot be written.
	Signed bool
	// num is the protobuf field that holds the key: a LogRecord's for
	// the root's keys, a Resource's or an InstrumentationScope's for
	// theirs, but for schema_url, which is ResourceLogs' and ScopeLogs'.
	// The resource and the scope (0) are the groups a LogRecord is in.
	num int
}

// IntRange is the range of an Int field's values, and its wire type.
func (f *ViewField) IntRange() (lo, hi int64, wire string) {
	if f.Signed {
		return math.MinInt32, math.MaxInt32, "int32"
	}
	return 0, math.MaxUint32, "uint32"
}

// intProblem says what is wrong with n in Int field f, "" when it fits.
func (f *ViewField) intProblem(n int64) string {
	lo, hi, wire := f.IntRange()
	if n < lo || n > hi {
		return "is " + strconv.FormatInt(n, 10) + ", not a " + wire
	}
	return ""
}

// Refinable reports whether a schema may declare a type for the key: the
// body and the attribute maps; the others have the one type the view gives.
func (f *ViewField) Refinable() bool {
	return f.Kind == Absent || f.Kind == Map && f.Fields == nil
}

// ValidID reports whether s can be the value of id field f (HexLen > 0):
// "" (no id: OTLP's empty bytes) or hex of HexLen bytes, in either case
// (the codecs write it lower-case). OTLP calls an all-zero id invalid,
// but protobuf carries it: it is hex like any other.
func (f *ViewField) ValidID(s string) bool {
	if s == "" {
		return true
	}
	if len(s) != 2*f.HexLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if hexClass[s[i]]&hexBad != 0 {
			return false
		}
	}
	return true
}

// idProblem says what an id that is not ValidID is not.
func (f *ViewField) idProblem() string {
	return "is not \"\" or " + strconv.Itoa(2*f.HexLen) + " hex digits"
}

// hexClass classes the bytes of a hex id: a digit or a lower-case letter
// 0, an upper-case letter hexUpper, anything else hexBad. An id's bytes
// are classed together, without a branch a byte.
var hexClass = func() (t [256]byte) {
	for c := range t {
		switch {
		case '0' <= c && c <= '9' || 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			t[c] = hexUpper
		default:
			t[c] = hexBad
		}
	}
	return t
}()

const (
	hexUpper = 1 << iota
	hexBad
)

// appendLowerHex appends the hex digits s in lower case, as the view
// holds ids.
func appendLowerHex(dst, s []byte) []byte {
	for _, c := range s {
		if 'A' <= c && c <= 'F' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// ViewID is a key's slot: its index among its group's keys (the root's,
// the resource's or the scope's).
type ViewID uint8

// The slots of the view. The values are the order of the keys in a decoded
// record's root map (and within resource and scope).
const (
	ViewBody ViewID = iota
	ViewAttributes
	ViewSeverityText
	ViewSeverityNumber
	ViewObservedTime
	ViewTraceID
	ViewSpanID
	ViewFlags
	ViewEventName
	ViewDropped
	ViewResource
	ViewScope
	numRootFields
)

const (
	ViewResAttributes ViewID = iota
	ViewResDropped
	ViewResSchemaURL
	numResourceFields
)

const (
	ViewScopeName ViewID = iota
	ViewScopeVersion
	ViewScopeAttributes
	ViewScopeDropped
	ViewScopeSchemaURL
	numScopeFields
)

var resourceView = []ViewField{
	{Name: "attributes", Kind: Map, ID: ViewResAttributes, num: resAttributes},
	{Name: "dropped_attributes_count", Kind: Int, ID: ViewResDropped, num: resDropped},
	{Name: "schema_url", Kind: String, ID: ViewResSchemaURL, num: groupSchemaURL},
}

var scopeView = []ViewField{
	{Name: "name", Kind: String, ID: ViewScopeName, num: scName},
	{Name: "version", Kind: String, ID: ViewScopeVersion, num: scVersion},
	{Name: "attributes", Kind: Map, ID: ViewScopeAttributes, num: scAttributes},
	{Name: "dropped_attributes_count", Kind: Int, ID: ViewScopeDropped, num: scDropped},
	{Name: "schema_url", Kind: String, ID: ViewScopeSchemaURL, num: groupSchemaURL},
}

var rootView = []ViewField{
	{Name: "body", Kind: Absent, ID: ViewBody, num: lrBody},
	{Name: "attributes", Kind: Map, ID: ViewAttributes, num: lrAttributes},
	{Name: "severity_text", Kind: String, ID: ViewSeverityText, num: lrSeverityText},
	{Name: "severity_number", Kind: Int, ID: ViewSeverityNumber, Signed: true, num: lrSeverityNumber},
	{Name: "observed_time", Kind: Timestamp, ID: ViewObservedTime, num: lrObservedTime},
	{Name: "trace_id", Kind: String, ID: ViewTraceID, HexLen: 16, num: lrTraceID},
	{Name: "span_id", Kind: String, ID: ViewSpanID, HexLen: 8, num: lrSpanID},
	{Name: "flags", Kind: Int, ID: ViewFlags, num: lrFlags},
	{Name: "event_name", Kind: String, ID: ViewEventName, num: lrEventName},
	{Name: "dropped_attributes_count", Kind: Int, ID: ViewDropped, num: lrDropped},
	{Name: "resource", Kind: Map, Fields: resourceView, ID: ViewResource},
	{Name: "scope", Kind: Map, Fields: scopeView, ID: ViewScope},
}

// The protobuf field numbers of opentelemetry-proto's logs messages
// (collector/logs/v1, logs/v1, common/v1, resource/v1), by message.
const (
	// ExportLogsServiceRequest
	reqResourceLogs = 1

	// ResourceLogs and ScopeLogs, which have one shape: the resource or
	// scope, the repeated children (scope_logs, log_records), the
	// schema_url.
	groupHead      = 1
	groupChildren  = 2
	groupSchemaURL = 3

	// Resource
	resAttributes = 1
	resDropped    = 2
	resEntityRefs = 3

	// EntityRef, which the view leaves out: its strings are checked
	entitySchemaURL       = 1
	entityType            = 2
	entityIDKeys          = 3
	entityDescriptionKeys = 4

	// InstrumentationScope
	scName       = 1
	scVersion    = 2
	scAttributes = 3
	scDropped    = 4

	// LogRecord
	lrTime           = 1
	lrSeverityNumber = 2
	lrSeverityText   = 3
	lrBody           = 5
	lrAttributes     = 6
	lrDropped        = 7
	lrFlags          = 8
	lrTraceID        = 9
	lrSpanID         = 10
	lrObservedTime   = 11
	lrEventName      = 12

	// KeyValue
	kvKey   = 1
	kvValue = 2

	// AnyValue, a oneof
	avString = 1
	avBool   = 2
	avInt    = 3
	avDouble = 4
	avArray  = 5
	avKvlist = 6
	avBytes  = 7

	// ArrayValue and KeyValueList: their repeated values
	listValues = 1
)

// protoField is a field of an OTLP message.
type protoField struct {
	num  int
	wire int
	name string // the proto name, which errors say and protojson reads too
	json string // the lowerCamelCase name, which OTLP/JSON writes
}

// protoMessage is an OTLP message: its fields in the order of their
// declaration, which is the order protojson (and the encoders) write them
// in, and by number.
type protoMessage struct {
	name   string
	fields []protoField
	// byNum is fields by number: a field's wire type (-1 for a number
	// the message does not have), its names and "Message.name".
	byNum struct {
		wire       [16]int
		name, json [16]string
		what       [16]string
	}
}

// newMessage makes a message of its fields, filling byNum. A function, not
// an init: the tables derived from the messages (the JSON names, the
// encoders' slots) are package variables that are initialised after it.
func newMessage(name string, fields []protoField) (m protoMessage) {
	m.name, m.fields = name, fields
	for i := range m.byNum.wire {
		m.byNum.wire[i] = -1
	}
	for _, f := range fields {
		m.byNum.wire[f.num] = f.wire
		m.byNum.name[f.num], m.byNum.json[f.num] = f.name, f.json
		m.byNum.what[f.num] = name + "." + f.name
	}
	return m
}

// The JSON names that the OTLP/JSON encoder writes for every record and
// value, as constants: its appends of them then compile to stores of
// known bytes, as literals do. The tables below name fields by them.
const (
	jsonTimeUnixNano           = "timeUnixNano"
	jsonObservedTimeUnixNano   = "observedTimeUnixNano"
	jsonSeverityNumber         = "severityNumber"
	jsonSeverityText           = "severityText"
	jsonBody                   = "body"
	jsonAttributes             = "attributes"
	jsonDroppedAttributesCount = "droppedAttributesCount"
	jsonFlags                  = "flags"
	jsonTraceID                = "traceId"
	jsonSpanID                 = "spanId"
	jsonEventName              = "eventName"
	jsonKeyName                = "key"
	jsonValue                  = "value"
	jsonStringValue            = "stringValue"
	jsonBoolValue              = "boolValue"
	jsonIntValue               = "intValue"
	jsonDoubleValue            = "doubleValue"
	jsonArrayValue             = "arrayValue"
	jsonKvlistValue            = "kvlistValue"
	jsonBytesValue             = "bytesValue"
	jsonValues                 = "values"
)

var (
	requestMsg = newMessage("ExportLogsServiceRequest", []protoField{
		{reqResourceLogs, wireBytes, "resource_logs", "resourceLogs"}})
	resourceLogsMsg = newMessage("ResourceLogs", []protoField{
		{groupHead, wireBytes, "resource", "resource"},
		{groupChildren, wireBytes, "scope_logs", "scopeLogs"},
		{groupSchemaURL, wireBytes, "schema_url", "schemaUrl"}})
	scopeLogsMsg = newMessage("ScopeLogs", []protoField{
		{groupHead, wireBytes, "scope", "scope"},
		{groupChildren, wireBytes, "log_records", "logRecords"},
		{groupSchemaURL, wireBytes, "schema_url", "schemaUrl"}})
	resourceMsg = newMessage("Resource", []protoField{
		{resAttributes, wireBytes, "attributes", jsonAttributes},
		{resDropped, wireVarint, "dropped_attributes_count", jsonDroppedAttributesCount},
		{resEntityRefs, wireBytes, "entity_refs", "entityRefs"}})
	entityRefMsg = newMessage("EntityRef", []protoField{
		{entitySchemaURL, wireBytes, "schema_url", "schemaUrl"},
		{entityType, wireBytes, "type", "type"},
		{entityIDKeys, wireBytes, "id_keys", "idKeys"},
		{entityDescriptionKeys, wireBytes, "description_keys", "descriptionKeys"}})
	scopeMsg = newMessage("InstrumentationScope", []protoField{
		{scName, wireBytes, "name", "name"},
		{scVersion, wireBytes, "version", "version"},
		{scAttributes, wireBytes, "attributes", jsonAttributes},
		{scDropped, wireVarint, "dropped_attributes_count", jsonDroppedAttributesCount}})
	logRecordMsg = newMessage("LogRecord", []protoField{
		{lrTime, wireFixed64, "time_unix_nano", jsonTimeUnixNano},
		{lrObservedTime, wireFixed64, "observed_time_unix_nano", jsonObservedTimeUnixNano},
		{lrSeverityNumber, wireVarint, "severity_number", jsonSeverityNumber},
		{lrSeverityText, wireBytes, "severity_text", jsonSeverityText},
		{lrBody, wireBytes, "body", jsonBody},
		{lrAttributes, wireBytes, "attributes", jsonAttributes},
		{lrDropped, wireVarint, "dropped_attributes_count", jsonDroppedAttributesCount},
		{lrFlags, wireFixed32, "flags", jsonFlags},
		{lrTraceID, wireBytes, "trace_id", jsonTraceID},
		{lrSpanID, wireBytes, "span_id", jsonSpanID},
		{lrEventName, wireBytes, "event_name", jsonEventName}})
	keyValueMsg = newMessage("KeyValue", []protoField{
		{kvKey, wireBytes, "key", jsonKeyName},
		{kvValue, wireBytes, "value", jsonValue}})
	anyValueMsg = newMessage("AnyValue", []protoField{
		{avString, wireBytes, "string_value", jsonStringValue},
		{avBool, wireVarint, "bool_value", jsonBoolValue},
		{avInt, wireVarint, "int_value", jsonIntValue},
		{avDouble, wireFixed64, "double_value", jsonDoubleValue},
		{avArray, wireBytes, "array_value", jsonArrayValue},
		{avKvlist, wireBytes, "kvlist_value", jsonKvlistValue},
		{avBytes, wireBytes, "bytes_value", jsonBytesValue}})
	arrayValueMsg = newMessage("ArrayValue", []protoField{
		{listValues, wireBytes, "values", jsonValues}})
	kvListMsg = newMessage("KeyValueList", []protoField{
		{listValues, wireBytes, "values", jsonValues}})
)

// wire is the wire type of field num, -1 when the message has none.
func (m *protoMessage) wire(num int) int {
	if num >= len(m.byNum.wire) {
		return -1
	}
	return m.byNum.wire[num]
}

// jsonName is the JSON name of field num.
func (m *protoMessage) jsonName(num int) string { return m.byNum.json[num] }

// what is "Message.field" of field num, as errors name it.
func (m *protoMessage) what(num int) string { return m.byNum.what[num] }

// wantType is the error for field num sent with wire type wt.
func (m *protoMessage) wantType(at, num, wt int) error {
	return wantType(at, m.name, m.byNum.name[num], wt, m.wire(num))
}
