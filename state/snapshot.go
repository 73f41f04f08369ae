package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// A snapshot is a version byte, one protobuf message State (state.proto)
// and the CRC-32C of both, big-endian: the layout of the pipeline's
// version-1 checkpoints.
const version byte = 1

// Field numbers of state.proto.
const (
	fieldTables = 1 // State.tables

	fieldID        = 1 // Table.id
	fieldKind      = 2 // Table.kind
	fieldMaxKeys   = 3 // Table.max_keys
	fieldWindow    = 4 // Table.window_nanos
	fieldN         = 5 // Table.n
	fieldSeq       = 6 // Table.seq
	fieldEntries   = 7 // Table.entries
	entryWireBytes = 24
)

// ErrCorrupt is wrapped by every error of Restore about the snapshot's
// bytes.
var ErrCorrupt = errors.New("state: corrupt snapshot")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Snapshot returns the Store's tables as bytes, for Restore: each table's
// statement and its keys from the least to the most recently used. It
// holds each table's lock while it copies that table.
func (s *Store) Snapshot() []byte {
	buf := []byte{version}
	var tb []byte
	for _, t := range s.sorted() {
		tb = t.appendTo(tb[:0])
		buf = protowire.AppendTag(buf, fieldTables, protowire.BytesType)
		buf = protowire.AppendBytes(buf, tb)
	}
	return binary.BigEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
}

func (t *Table) appendTo(b []byte) []byte {
	sp := t.spec
	b = protowire.AppendTag(b, fieldID, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, sp.ID)
	for _, f := range [...]struct {
		n protowire.Number
		v uint64
	}{{fieldKind, uint64(sp.Kind)}, {fieldMaxKeys, uint64(sp.MaxKeys)}, {fieldWindow, uint64(sp.Window)}, {fieldN, uint64(sp.N)}, {fieldSeq, t.seq.Load()}} {
		b = protowire.AppendTag(b, f.n, protowire.VarintType)
		b = protowire.AppendVarint(b, f.v)
	}
	t.lock()
	defer t.mu.Unlock()
	b = protowire.AppendTag(b, fieldEntries, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(t.n*entryWireBytes))
	t.each(func(e *entry) {
		b = binary.LittleEndian.AppendUint64(b, e.key)
		b = binary.LittleEndian.AppendUint64(b, uint64(e.t))
		b = binary.LittleEndian.AppendUint64(b, uint64(e.n))
	})
	return b
}

// Restore loads the tables of a snapshot: into the Store's own table of
// the same ID and Spec where a program is bound already (the others are
// statements no longer run, and are dropped), or, before any Bind, kept
// for the first (which takes those it is asked for). On an error the
// Store is as it was.
func (s *Store) Restore(data []byte) error {
	tables, err := decode(data)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, t := range tables {
		if own := s.tables[id]; own != nil && own.spec == t.spec {
			own.load(t)
			continue
		}
		if !s.bound {
			s.tables[id] = t
		}
	}
	return nil
}

// load makes t hold the keys of from, a table of the same Spec that
// nothing else uses.
func (t *Table) load(from *Table) {
	t.lock()
	t.slots, t.log, t.head, t.n, t.c = from.slots, from.log, from.head, from.n, from.c
	t.mu.Unlock()
	t.seq.Store(from.seq.Load())
}

func decode(data []byte) (map[uint64]*Table, error) {
	if len(data) < 5 {
		return nil, fmt.Errorf("%w: %d bytes", ErrCorrupt, len(data))
	}
	if data[0] != version {
		return nil, fmt.Errorf("%w: unknown version byte 0x%02x", ErrCorrupt, data[0])
	}
	body, sum := data[:len(data)-4], data[len(data)-4:]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(sum) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	tables := map[uint64]*Table{}
	for b := body[1:]; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, protowire.ParseError(n))
		}
		b = b[n:]
		if num == fieldTables && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, fmt.Errorf("%w: %v", ErrCorrupt, protowire.ParseError(n))
			}
			b = b[n:]
			t, err := decodeTable(v)
			if err != nil {
				return nil, err
			}
			if tables[t.spec.ID] != nil {
				return nil, fmt.Errorf("%w: two tables of id %016x", ErrCorrupt, t.spec.ID)
			}
			tables[t.spec.ID] = t
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, protowire.ParseError(n))
		}
		b = b[n:]
	}
	return tables, nil
}

func decodeTable(b []byte) (*Table, error) {
	var sp Spec
	var seq uint64
	var ents []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case num == fieldID && typ == protowire.Fixed64Type:
			sp.ID, n = protowire.ConsumeFixed64(b)
		case num == fieldEntries && typ == protowire.BytesType:
			ents, n = protowire.ConsumeBytes(b)
		case num >= fieldKind && num <= fieldSeq && typ == protowire.VarintType:
			var v uint64
			v, n = protowire.ConsumeVarint(b)
			switch num {
			case fieldKind:
				sp.Kind = Kind(min(v, 255))
			case fieldMaxKeys:
				sp.MaxKeys = int(min(v, MaxMaxKeys+1))
			case fieldWindow:
				sp.Window = int64(v)
			case fieldN:
				sp.N = int64(v)
			case fieldSeq:
				seq = v
			}
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, protowire.ParseError(n))
		}
		b = b[n:]
	}
	switch {
	case sp.Kind < Dedupe || sp.Kind > SampleEvery:
		return nil, fmt.Errorf("%w: table %016x: unknown kind %d", ErrCorrupt, sp.ID, sp.Kind)
	case sp.MaxKeys < 1 || sp.MaxKeys > MaxMaxKeys:
		return nil, fmt.Errorf("%w: table %016x: max_keys %d out of range", ErrCorrupt, sp.ID, sp.MaxKeys)
	case sp.Window < 0 || sp.N < 0:
		return nil, fmt.Errorf("%w: table %016x: a negative window or N", ErrCorrupt, sp.ID)
	case len(ents)%entryWireBytes != 0:
		return nil, fmt.Errorf("%w: table %016x: entries of %d bytes", ErrCorrupt, sp.ID, len(ents))
	case len(ents)/entryWireBytes > sp.MaxKeys:
		return nil, fmt.Errorf("%w: table %016x: %d keys past max_keys %d", ErrCorrupt, sp.ID, len(ents)/entryWireBytes, sp.MaxKeys)
	case len(ents) > 0 && !sp.Kind.Keyed():
		return nil, fmt.Errorf("%w: table %016x: keys in a %s table", ErrCorrupt, sp.ID, sp.Kind)
	}
	t := newTable(sp)
	t.seq.Store(seq)
	// The least recently used first: each one found goes to the front.
	for ; len(ents) > 0; ents = ents[entryWireBytes:] {
		key := binary.LittleEndian.Uint64(ents)
		at, n := int64(binary.LittleEndian.Uint64(ents[8:])), binary.LittleEndian.Uint64(ents[16:])
		e, found := t.find(key, at)
		if found {
			return nil, fmt.Errorf("%w: table %016x: key %016x twice", ErrCorrupt, sp.ID, key)
		}
		// A count past what a table keeps (entry.n) stays at its most.
		e.n = uint32(min(n, math.MaxUint32))
	}
	return t, nil
}
