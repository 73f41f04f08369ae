package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// The older layout: one JSON object, fingerprints and partial lines in
// base64, attributes as an object. It has no checksum; a truncated file fails
// to parse. Kept for reading old checkpoints and as the benchmark baseline.
type jsonCheckpoint struct {
	Version int        `json:"version"`
	Files   []jsonFile `json:"files"`
}

type jsonFile struct {
	Fingerprint  []byte            `json:"fingerprint"`
	Offset       int64             `json:"offset"`
	RecordNum    int64             `json:"record_num"`
	Path         string            `json:"path"`
	Dev          uint64            `json:"dev,omitempty"`
	Inode        uint64            `json:"inode,omitempty"`
	Attributes   map[string]string `json:"attributes,omitempty"`
	Partial      []byte            `json:"partial,omitempty"`
	Skipping     bool              `json:"skipping,omitempty"`
	PartialSince *time.Time        `json:"partial_since,omitempty"`
}

func (e *Encoder) encodeJSON(c *Checkpoint) ([]byte, error) {
	jc := jsonCheckpoint{Version: 1, Files: make([]jsonFile, len(c.Files))}
	for i := range c.Files {
		f, j := &c.Files[i], &jc.Files[i]
		*j = jsonFile{
			Fingerprint: f.Fingerprint,
			Offset:      f.Offset,
			RecordNum:   f.RecordNum,
			Path:        f.Path,
			Dev:         f.Dev,
			Inode:       f.Inode,
			Partial:     f.Partial,
			Skipping:    f.Skipping,
		}
		if len(f.Attributes) > 0 {
			j.Attributes = make(map[string]string, len(f.Attributes))
			for _, a := range f.Attributes {
				j.Attributes[a.Key] = a.Value
			}
		}
		if !f.PartialSince.IsZero() {
			t := f.PartialSince
			j.PartialSince = &t
		}
	}
	b := bytes.NewBuffer(e.buf[:0])
	if err := json.NewEncoder(b).Encode(&jc); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	e.buf = b.Bytes()
	return e.buf, nil
}

func decodeJSON(data []byte) (*Checkpoint, error) {
	var jc jsonCheckpoint
	if err := json.Unmarshal(data, &jc); err != nil {
		return nil, fmt.Errorf("%w: json: %v", ErrCorrupt, err)
	}
	if jc.Version != 1 {
		return nil, fmt.Errorf("%w: json: unknown version %d", ErrCorrupt, jc.Version)
	}
	c := &Checkpoint{Files: make([]File, len(jc.Files))}
	for i := range jc.Files {
		j, f := &jc.Files[i], &c.Files[i]
		*f = File{
			Fingerprint: j.Fingerprint,
			Offset:      j.Offset,
			RecordNum:   j.RecordNum,
			Path:        j.Path,
			Dev:         j.Dev,
			Inode:       j.Inode,
			Partial:     j.Partial,
			Skipping:    j.Skipping,
		}
		if j.PartialSince != nil {
			f.PartialSince = *j.PartialSince
		}
		if len(j.Attributes) > 0 {
			f.Attributes = make([]Attr, 0, len(j.Attributes))
			for k, v := range j.Attributes {
				f.Attributes = append(f.Attributes, Attr{k, v})
			}
			// The object has no order; sort so that decoding is deterministic.
			sort.Slice(f.Attributes, func(a, b int) bool { return f.Attributes[a].Key < f.Attributes[b].Key })
		}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}
