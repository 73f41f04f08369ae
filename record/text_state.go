package record

// textState is what a record decoded from text (a JSON line, a msgpack
// event) keeps besides Record: the state that lets its output copy the
// runs of its text that its edits left alone (json_splice.go,
// msgpack_splice.go, root_journal.go), and a Fluent Bit v2 event's
// metadata. Records of other decoders (OTLP, NewRecord) have none and
// pay nothing for it: a record's fixed cost is Record alone
// (docs/records.md, "A record's fixed cost").
//
// The states live in a slab of the arena, reused after Reset, so that a
// decode makes no allocation per record in the steady state.
type textState struct {
	// decLo and decHi are the nodes the decode of the text made (equal
	// when there is no text). Those nodes never change, so an edited
	// record's output copies the runs of text whose nodes it still holds,
	// finding them from the offsets of the keys.
	decLo, decHi uint32
	// keys has the signature of every key of the root map while keysAt is
	// the root's first node + 1 (0: not known), so that a key missing from
	// the root is known missing without a scan: most edits add keys to the
	// root. Keys added to the root add theirs; removed keys leave theirs
	// (a superset still answers "missing" right).
	keysAt uint32
	keys   sigSet
	// jr is the root journal (root_journal.go); baseJr is the one of
	// base, which Discard returns to.
	jr, baseJr rootJournal
	// meta is a Fluent Bit v2 event's metadata map, else Absent.
	meta Value
}

// newText gives r a cleared textState and returns it. The pointer is
// valid until the arena's next newText.
func (r *Record) newText() *textState {
	a := r.a
	a.texts = append(a.texts, textState{})
	r.ext = uint32(len(a.texts))
	return &a.texts[len(a.texts)-1]
}

// ts returns r's textState; r.ext must not be 0. The pointer is valid
// until the arena's next newText.
func (r *Record) ts() *textState { return &r.a.texts[r.ext-1] }

// missing reports whether a key of signature sig is known to be missing
// from root, the record's root.
func (t *textState) missing(root Value, sig uint8) bool {
	return t.keysAt == root.off()+1 && !t.keys.has(sig)
}

// meta returns a Fluent Bit v2 event's metadata map, else Absent.
func (r *Record) meta() Value {
	if r.ext == 0 {
		return Value{}
	}
	return r.ts().meta
}

// decodedNodes returns the nodes the decode of the record's text made
// (lo == hi when there is no text).
func (r *Record) decodedNodes() (lo, hi uint32) {
	if r.ext == 0 {
		return 0, 0
	}
	t := r.ts()
	return t.decLo, t.decHi
}

// forgetRoot is called when the root was replaced by another map: what
// the text state knew of the root's keys and entries no longer holds.
func (r *Record) forgetRoot() {
	if r.ext != 0 {
		t := r.ts()
		t.keysAt = 0
		t.jr.ok = false
	}
}
