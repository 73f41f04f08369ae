package config

import (
	"testing"

	"github.com/policyrun/policyrun/pipeline/output"
)

// TestOutputInsecureSkipVerify checks that tls.insecure_skip_verify of
// the otlp and http outputs is read, nested or dotted, and is false by
// default (docs/pipeline.md, "otlp and http").
func TestOutputInsecureSkipVerify(t *testing.T) {
	tests := []struct {
		name, output, keys string
		want               bool
	}{
		{"otlp default", "otlp", "", false},
		{"otlp nested", "otlp", "      tls: {insecure_skip_verify: true}\n", true},
		{"otlp dotted", "otlp", "      tls.insecure_skip_verify: true\n", true},
		{"otlp false", "otlp", "      tls:\n        insecure_skip_verify: false\n", false},
		{"http default", "http", "", false},
		{"http nested", "http", "      tls:\n        insecure_skip_verify: true\n", true},
		{"http dotted", "http", "      tls.insecure_skip_verify: true\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := "endpoint: https://collector:4318"
			if tt.output == "http" {
				url = "uri: https://collector/ingest"
			}
			src := "pipeline:\n  inputs:\n    - name: otlp\n  outputs:\n    - name: " + tt.output + "\n      " + url + "\n" + tt.keys
			cfg, err := Parse("p.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			var got output.ClientTLS
			switch s := cfg.Outputs[0].Settings.(type) {
			case *output.OTLPConfig:
				got = s.TLS
			case *output.HTTPOutputConfig:
				got = s.TLS
			default:
				t.Fatalf("settings %T", s)
			}
			if got.InsecureSkipVerify != tt.want {
				t.Errorf("insecure_skip_verify = %v, want %v", got.InsecureSkipVerify, tt.want)
			}
		})
	}
}
