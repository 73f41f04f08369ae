// Package policyrunprocessor is an OpenTelemetry Collector processor that
// runs typed policies (github.com/policyrun/policyrun) over log records:
//
//	processors:
//	  policyrun:
//	    policies: [redact.policy]
//
// Policies see each record in the OTLP view (docs/otlp.md) and are
// compiled when the Collector starts: one that does not compile stops it,
// with every diagnostic. The processor reads from pdata only what the
// policies read and writes back only what they changed; see
// docs/collector.md.
package policyrunprocessor

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.uber.org/zap"
)

// Type is the processor's type, as configs name it.
var Type = component.MustNewType("policyrun")

// NewFactory returns the factory of the policyrun processor (logs only).
func NewFactory() processor.Factory {
	return processor.NewFactory(Type, func() component.Config { return &Config{} },
		processor.WithLogs(createLogs, component.StabilityLevelDevelopment))
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("policyrun: config of type %T, want *Config", cfg)
	}
	p, err := newFromConfig(set, c)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewLogs(ctx, set, cfg, next, p.processLogs,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		processorhelper.WithStart(p.state.start),
		processorhelper.WithShutdown(p.state.shutdown))
}

// newFromConfig compiles the policies of c and makes the processor.
func newFromConfig(set processor.Settings, c *Config) (*logsProcessor, error) {
	lim, err := c.limits()
	if err != nil {
		return nil, err
	}
	pols, warnings, err := compilePolicies(c.Policies, c.Params, lim, nil)
	if err != nil {
		return nil, err
	}
	if warnings != "" {
		set.Logger.Warn("policy warnings:\n" + warnings)
	}
	names := make([]string, len(pols))
	for i, p := range pols {
		names[i] = p.name
		// Which path the policy takes (docs/collector.md, "Two paths").
		switch {
		case p.plan != nil && p.why == "":
			set.Logger.Info("policy runs on pdata directly (the plan)", zap.String("policy", p.name))
		case p.plan != nil:
			set.Logger.Info("policy runs on pdata directly (the plan), and records that reach a statement it does not run take the general path", zap.String("policy", p.name), zap.String("statement", p.why))
		default:
			set.Logger.Info("policy runs on the general path (projection, VM, write-back)", zap.String("policy", p.name), zap.String("because", p.why))
		}
		if p.store != nil {
			where := "in memory only (no storage)"
			if c.Storage != nil {
				where = "saved to " + c.Storage.String()
			}
			set.Logger.Info("policy keeps state", zap.String("policy", p.name), zap.Int64("max_bytes", p.memory), zap.String("kept", where))
		}
	}
	tel, err := newTelemetry(set.MeterProvider, set.ID.String(), names)
	if err != nil {
		return nil, err
	}
	p := newProcessor(pols, tel)
	p.state = newStateKeeper(c, set.ID, set.Logger, pols)
	return p, nil
}
