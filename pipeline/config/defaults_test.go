package config

import (
	"strings"
	"testing"
	"time"
)

// TestDefaults checks the defaults docs/pipeline.md gives the otlp input
// (listen 127.0.0.1:4318, max_request_size 20M, tag otlp) and
// service.grace (5s), written out here rather than read from the
// constants, and that each key given replaces its default.
func TestDefaults(t *testing.T) {
	const outputs = "  outputs:\n    - name: null\n"
	type want struct {
		listen  string
		maxSize int64
		tag     string
		grace   time.Duration
	}
	documented := want{listen: "127.0.0.1:4318", maxSize: 20 * 1024 * 1024, tag: "otlp", grace: 5 * time.Second}
	tests := []struct {
		name, src string
		want
	}{
		{"nothing set", "pipeline:\n  inputs:\n    - name: otlp\n" + outputs, documented},
		{"an empty service section", "service: {}\npipeline:\n  inputs:\n    - name: otlp\n" + outputs, documented},
		{
			"all set",
			"service:\n  grace: 250ms\npipeline:\n  inputs:\n    - name: otlp\n      listen: 0.0.0.0:14318\n" +
				"      max_request_size: 1M\n      tag: edge\n" + outputs,
			want{listen: "0.0.0.0:14318", maxSize: 1 << 20, tag: "edge", grace: 250 * time.Millisecond},
		},
		{
			"grace in bare seconds, max_request_size in bytes",
			"service:\n  grace: 2\npipeline:\n  inputs:\n    - name: otlp\n      max_request_size: 4096\n" + outputs,
			want{listen: documented.listen, maxSize: 4096, tag: documented.tag, grace: 2 * time.Second},
		},
		{
			"grace with a tail input",
			"pipeline:\n  inputs:\n    - name: tail\n      path: a.log\n" + outputs,
			want{tag: "tail", grace: documented.grace}, // not an otlp input: no OTLP keys
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("p.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			in := cfg.Inputs[0]
			if in.OTLP.Listen != tt.listen {
				t.Errorf("listen = %q, want %q", in.OTLP.Listen, tt.listen)
			}
			if in.OTLP.MaxRequestSize != tt.maxSize {
				t.Errorf("max_request_size = %d, want %d", in.OTLP.MaxRequestSize, tt.maxSize)
			}
			if in.Tag != tt.tag {
				t.Errorf("tag = %q, want %q", in.Tag, tt.tag)
			}
			if cfg.Service.Grace != tt.grace {
				t.Errorf("service.grace = %v, want %v", cfg.Service.Grace, tt.grace)
			}
		})
	}
	// The exported defaults say the same.
	if DefaultOTLPListen != documented.listen || DefaultOTLPMaxRequestSize != documented.maxSize || DefaultGrace != documented.grace {
		t.Errorf("defaults %q, %d, %v, want %+v", DefaultOTLPListen, DefaultOTLPMaxRequestSize, DefaultGrace, documented)
	}
}

// TestOTLPInputBounds: the otlp input's bounds on what a client can hold:
// their defaults, their keys, and their errors.
func TestOTLPInputBounds(t *testing.T) {
	const outputs = "  outputs:\n    - name: stdout\n"
	tests := []struct {
		keys     string
		records  int
		timeout  time.Duration
		inflight int64
		err      string // a part of the error; "" for none
	}{
		{"", DefaultOTLPMaxRequestRecords, DefaultOTLPReadTimeout, DefaultOTLPMaxInflightSize, ""},
		{"max_request_records: 10\n      read_timeout: 2s\n      max_inflight_size: 64M\n", 10, 2 * time.Second, 64 << 20, ""},
		{"max_request_records: 0\n", 0, 0, 0, "p.yaml:5: max_request_records must be more than 0"},
		{"read_timeout: 0s\n", 0, 0, 0, "p.yaml:5: read_timeout must be more than 0"},
		{"max_inflight_size: 1M\n", 0, 0, 0, "max_inflight_size (1048576 bytes) is less than max_request_size (20971520)"},
	}
	for _, tt := range tests {
		src := "pipeline:\n  inputs:\n    - name: otlp\n      listen: 127.0.0.1:4318\n"
		if tt.keys != "" {
			src += "      " + tt.keys
		}
		src += outputs
		cfg, err := Parse("p.yaml", []byte(src))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: %v, want %q", tt.keys, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tt.keys, err)
		}
		o := cfg.Inputs[0].OTLP
		if o.MaxRequestRecords != tt.records || o.ReadTimeout != tt.timeout || o.MaxInflightSize != tt.inflight {
			t.Errorf("%q: %d, %v, %d", tt.keys, o.MaxRequestRecords, o.ReadTimeout, o.MaxInflightSize)
		}
	}
}
