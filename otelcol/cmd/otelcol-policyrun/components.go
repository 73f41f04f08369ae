package main

import (
	"errors"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/loadbalancingexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/filterprocessor"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/transformprocessor"
	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/filelogreceiver"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/nopexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"

	"github.com/policyrun/policyrun/otelcol/policyrunprocessor"
)

// The components of the distribution, as ocb would generate them from
// ../../builder-config.yaml (which lists the same ones at the same
// versions): written by hand so that the distribution builds with go
// build alone.

// modules maps each component's type to its Go module, for the
// components command. The versions are go.mod's.
const (
	contrib = "github.com/open-telemetry/opentelemetry-collector-contrib/"
	core    = "go.opentelemetry.io/collector/"
	release = " v0.160.0"
)

func components() (otelcol.Factories, error) {
	var f otelcol.Factories
	// Each map is made whatever the others' errors, so that all are told.
	var errs [4]error
	f.Receivers, errs[0] = otelcol.MakeFactoryMap[receiver.Factory](
		otlpreceiver.NewFactory(),
		filelogreceiver.NewFactory(),
	)
	f.Processors, errs[1] = otelcol.MakeFactoryMap[processor.Factory](
		batchprocessor.NewFactory(),
		memorylimiterprocessor.NewFactory(),
		transformprocessor.NewFactory(),
		filterprocessor.NewFactory(),
		policyrunprocessor.NewFactory(),
	)
	f.Exporters, errs[2] = otelcol.MakeFactoryMap[exporter.Factory](
		debugexporter.NewFactory(),
		fileexporter.NewFactory(),
		otlphttpexporter.NewFactory(),
		nopexporter.NewFactory(),
		loadbalancingexporter.NewFactory(),
	)
	f.Extensions, errs[3] = otelcol.MakeFactoryMap[extension.Factory](
		filestorage.NewFactory(),
	)
	if err := errors.Join(errs[:]...); err != nil {
		return f, err
	}
	f.Telemetry = otelconftelemetry.NewFactory()
	f.ReceiverModules = modulesOf(f.Receivers, map[string]string{
		"otlp": core + "receiver/otlpreceiver" + release, "file_log": contrib + "receiver/filelogreceiver" + release})
	f.ProcessorModules = modulesOf(f.Processors, map[string]string{
		"batch": core + "processor/batchprocessor" + release, "memory_limiter": core + "processor/memorylimiterprocessor" + release,
		"transform": contrib + "processor/transformprocessor" + release, "filter": contrib + "processor/filterprocessor" + release,
		"policyrun": "github.com/policyrun/policyrun/otelcol (this repository)"})
	f.ExporterModules = modulesOf(f.Exporters, map[string]string{
		"debug": core + "exporter/debugexporter" + release, "file": contrib + "exporter/fileexporter" + release,
		"otlp_http": core + "exporter/otlphttpexporter" + release, "nop": core + "exporter/nopexporter" + release,
		"load_balancing": contrib + "exporter/loadbalancingexporter" + release})
	f.ExtensionModules = modulesOf(f.Extensions, map[string]string{
		"file_storage": contrib + "extension/storage/filestorage" + release})
	return f, nil
}

// modulesOf keys the module of each factory by its type, and by the
// deprecated alias MakeFactoryMap also keys it by.
func modulesOf[F component.Factory](factories map[component.Type]F, modules map[string]string) map[component.Type]string {
	out := make(map[component.Type]string, len(factories))
	for t, f := range factories {
		out[t] = modules[f.Type().String()]
	}
	return out
}
