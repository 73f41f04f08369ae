// Package record holds log records in arenas: decoding JSON lines and msgpack
// (Fluent Bit events) into flat value nodes, typed reads, an edit overlay, and encoding.
//
// An Arena owns the memory of a batch of records. Values are nodes in one
// flat slice; strings and keys point into the input lines (referenced) or into
// the arena's byte slab (owned). Arena.Reset reuses everything, so decoding,
// reading, editing and encoding a batch allocates nothing in steady state.
//
// A Value is a small handle (a kind and 12 bytes of payload): scalars carry
// their payload, strings and containers refer to the arena that made them.
// Values are valid until the arena's next Reset.
//
// The API in one pass: Arena.DecodeJSON and Arena.DecodeMsgpack make a
// Record; Record.Get reads a Path, and the Arena reads the values it
// returns (Key, Index, Len, Iter, Bytes, Str; Value has the kind and the
// scalars); Record.Set, SetIfAbsent, Remove, Take and Lift edit;
// Record.AppendJSON and AppendMsgpack encode; Arena.Reset starts the next
// batch. Values are made with IntValue and its siblings, Arena.NewString,
// Arena.BeginMap and BeginArray, and, for a backend building strings while
// it runs, Arena.StringBuilder.
//
// Edits are copy-on-write: the first edit of a map (or array) in a record
// copies it, with spare capacity, into new arena nodes, together with every
// container on the path from the root; later edits change the copy in place.
// The decoded nodes are never changed, so Record.Discard restores the record
// as decoded by pointing it back at its original root, and the encoder simply
// walks the current root: any number of edits cost one encode, and a
// record decoded from a JSON line (or a msgpack event) and not edited is
// written as the line (or the event's body). An edited one copies the runs
// of its line or body that the edits left (splice.go).
//
// The rules for bad input, numbers, strings, duplicate keys and key order are
// in docs/records.md.
//
// OTLP log records (their view is in docs/otlp.md) come from Arena.DecodeOTLP
// (protobuf), Arena.DecodeOTLPJSON (OTLP/JSON) and Arena.DecodeOTLPView (the
// view as JSON, as test blocks write it), and an OTLPEncoder writes records
// as OTLP requests, protobuf or JSON, regrouped by resource and scope.
package record
