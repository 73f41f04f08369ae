// Command otelcol-policyrun is an OpenTelemetry Collector with the
// policyrun processor: the OTLP and filelog receivers; the batch,
// memory_limiter, transform, filter and policyrun processors; the debug,
// file, otlphttp, nop and load_balancing exporters; and file_storage
// (docs/collector.md).
//
//	otelcol-policyrun --config config.yaml
//	otelcol-policyrun validate --config config.yaml
package main

import (
	"log"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/otelcol"
)

// settings are the Collector's: its build, its components, and where its
// config may come from (files, environment variables, inline YAML).
func settings() otelcol.CollectorSettings {
	return otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     "otelcol-policyrun",
			Description: "OpenTelemetry Collector with the policyrun processor",
			Version:     "0.1.0",
		},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{
					fileprovider.NewFactory(),
					envprovider.NewFactory(),
					yamlprovider.NewFactory(),
				},
				DefaultScheme: "env",
			},
		},
	}
}

func main() {
	cmd := otelcol.NewCommand(settings())
	cmd.SilenceErrors = true // printed once, below: policy errors are long
	if err := cmd.Execute(); err != nil {
		log.Fatal(err)
	}
}
