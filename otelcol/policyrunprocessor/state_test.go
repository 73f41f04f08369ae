package policyrunprocessor

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/policyrun/policyrun/spec"
)

const dedupePolicy = "policy \"once\"\nschema otlp {\n  attributes: { user: string?, ... }\n}\n" +
	"dedupe by .attributes.user within \"1h\" count .attributes.repeats\n"

// users is a batch of one record per user, in order.
func users(names ...string) plog.Logs {
	var recs []func(plog.LogRecord)
	for _, n := range names {
		recs = append(recs, lrec("hi", map[string]any{"user": n}))
	}
	return build(rgroup{scopes: []sgroup{{name: "s", recs: recs}}})
}

// kept lists the users of the records ld kept, with their repeats.
func kept(ld plog.Logs) string {
	var out []string
	forRecords(ld, func(_ pcommon.Resource, lr plog.LogRecord) {
		u, _ := lr.Attributes().Get("user")
		s := u.Str()
		if r, ok := lr.Attributes().Get("repeats"); ok {
			s += fmt.Sprintf("+%d", r.Int())
		}
		out = append(out, s)
	})
	return strings.Join(out, " ")
}

// host is a Collector host with extensions.
type host struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h host) GetExtensions() map[component.ID]component.Component { return h.ext }

// fileStorage starts a real file_storage extension over dir.
func fileStorage(t *testing.T, dir string) (component.ID, host) {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	id := component.MustNewIDWithName("file_storage", "policyrun")
	ext, err := f.Create(context.Background(), extension.Settings{ID: id, TelemetrySettings: extensiontest.NewNopSettings(f.Type()).TelemetrySettings, BuildInfo: component.NewDefaultBuildInfo()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := host{Host: componenttest.NewNopHost(), ext: map[component.ID]component.Component{id: ext}}
	if err := ext.Start(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ext.Shutdown(context.Background()) })
	return id, h
}

// A dedupe's memory lasts across batches of one processor, and, with a
// storage extension, across a restart; drops are counted by reason.
func TestStateAcrossBatchesAndRestarts(t *testing.T) {
	ctx := context.Background()
	files := writePolicies(t, dedupePolicy)
	id, h := fileStorage(t, t.TempDir())
	cfg := &Config{Policies: files, Storage: &id}
	run := func(p interface {
		ConsumeLogs(context.Context, plog.Logs) error
	}, sink *consumertest.LogsSink, names ...string) string {
		sink.Reset()
		if err := p.ConsumeLogs(ctx, users(names...)); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ld := range sink.AllLogs() {
			got = append(got, kept(ld))
		}
		return strings.Join(got, " ")
	}
	start := func() (*consumertest.LogsSink, interface {
		ConsumeLogs(context.Context, plog.Logs) error
		Shutdown(context.Context) error
	}) {
		sink := new(consumertest.LogsSink)
		p, err := NewFactory().CreateLogs(ctx, processortest.NewNopSettings(Type), cfg, sink)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start(ctx, h); err != nil {
			t.Fatal(err)
		}
		return sink, p
	}
	sink, p := start()
	if got := run(p, sink, "a", "b", "a"); got != "a+0 b+0" {
		t.Errorf("first batch kept %q, want %q", got, "a+0 b+0")
	}
	if got := run(p, sink, "a", "c"); got != "c+0" {
		t.Errorf("second batch kept %q, want %q", got, "c+0")
	}
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// A new instance over the same storage remembers a, b and c.
	sink, p = start()
	defer p.Shutdown(ctx)
	if got := run(p, sink, "a", "b", "d"); got != "d+0" {
		t.Errorf("after the restart kept %q, want %q", got, "d+0")
	}

	// Without storage, a restart forgets.
	cfg.Storage = nil
	sink, q := start()
	defer q.Shutdown(ctx)
	if got := run(q, sink, "a", "a"); got != "a+0" {
		t.Errorf("without storage kept %q, want %q", got, "a+0")
	}
}

// The drops of a stateful statement are counted under its reason, not
// as a drop statement's.
func TestStateDropsCountedByReason(t *testing.T) {
	p := newTest(t, dedupePolicy)
	b := p.get()
	b.run(users("a", "a", "b", "a"))
	if c := b.c; c.dropped != 2 || c.whys[spec.ByDedupe] != 2 || sum(c.drops) != 0 {
		t.Errorf("dropped %d, by dedupe %d, by drop statements %d; want 2, 2, 0", c.dropped, c.whys[spec.ByDedupe], sum(c.drops))
	}
	b.reset()
	p.put(b)
}

// A storage that does not hold a snapshot of ours is logged, and the
// policy starts with empty state; a storage that is not there stops the
// start.
func TestStateStorageProblems(t *testing.T) {
	ctx := context.Background()
	files := writePolicies(t, dedupePolicy)
	id, h := fileStorage(t, t.TempDir())
	// Put garbage where the policy's state goes.
	client, err := h.ext[id].(storage.Extension).GetClient(ctx, component.KindProcessor, component.NewID(Type), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Set(ctx, "state/once", []byte("not a snapshot")); err != nil {
		t.Fatal(err)
	}
	client.Close(ctx)

	core, logs := observer.New(zap.WarnLevel)
	set := processortest.NewNopSettings(Type)
	set.Logger = zap.New(core)
	p, err := NewFactory().CreateLogs(ctx, set, &Config{Policies: files, Storage: &id}, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx, h); err != nil {
		t.Fatal(err)
	}
	p.Shutdown(ctx)
	if logs.FilterMessageSnippet("does not load").Len() != 1 {
		t.Errorf("no warning of the bad snapshot: %v", logs.All())
	}

	missing := component.MustNewIDWithName("file_storage", "nope")
	p, err = NewFactory().CreateLogs(ctx, processortest.NewNopSettings(Type), &Config{Policies: files, Storage: &missing}, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx, h); err == nil || !strings.Contains(err.Error(), "no extension file_storage/nope") {
		t.Errorf("start with a missing extension: %v", err)
	}
}
