package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
)

// A figure is a measurement of another system, from a file of
// --others: which benchmark and case of ours it stands beside, its value
// and unit, and where it was published. bench report draws it as a bar
// beside ours when a chart has that benchmark, case and unit (or a unit
// it converts to), and lists it under its section otherwise.
type figure struct {
	System    string  `json:"system"`
	Benchmark string  `json:"benchmark"` // "B1" … "B5"
	Case      string  `json:"case"`      // the case's key in our charts: "3-edit", "owned", "save/files=1000"
	Value     float64 `json:"value"`
	Unit      string  `json:"unit"`
	Records   int64   `json:"records,omitempty"` // the records a "CPU s" figure was measured over
	Source    string  `json:"source"`            // who published it, where
	URL       string  `json:"url,omitempty"`
	Note      string  `json:"note,omitempty"`
}

// othersFile is the file of --others: {"figures": [...]} (a "comment"
// beside it is allowed), or a bare array of figures.
type othersFile struct {
	Comment string   `json:"comment,omitempty"`
	Figures []figure `json:"figures"`
}

func loadOthers(path string) ([]figure, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var figs []figure
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		err = strictJSON(t, &figs)
	} else {
		var f othersFile
		err = strictJSON(t, &f)
		figs = f.Figures
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for i, f := range figs {
		switch {
		case f.System == "" || f.Benchmark == "" || f.Case == "" || f.Unit == "":
			err = fmt.Errorf("system, benchmark, case and unit are required")
		case f.Source == "" && f.URL == "":
			err = fmt.Errorf("a figure needs its source")
		case f.Value < 0 || math.IsNaN(f.Value) || math.IsInf(f.Value, 0):
			err = fmt.Errorf("value %v: a figure is a non-negative number", f.Value)
		case f.Records < 0:
			err = fmt.Errorf("records must not be negative")
		}
		if err != nil {
			return nil, fmt.Errorf("%s: figure %d (%s, %s %s): %v", path, i+1, f.System, f.Benchmark, f.Case, err)
		}
	}
	return figs, nil
}

func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// valueIn returns the figure in unit: as it is when the units are the
// same; CPU seconds over its records as CPU seconds per million records.
func (f figure) valueIn(unit string) (float64, bool) {
	switch {
	case f.Unit == unit:
		return f.Value, true
	case f.Unit == "CPU s" && unit == "CPU s/M" && f.Records > 0:
		return f.Value / float64(f.Records) * 1e6, true
	}
	return 0, false
}

// cite is the figure's source as one line of text.
func (f figure) cite() string {
	switch {
	case f.URL == "":
		return f.Source
	case f.Source == "":
		return f.URL
	}
	return f.Source + " — " + f.URL
}
