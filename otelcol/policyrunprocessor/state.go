package policyrunprocessor

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/policyrun/policyrun/state"
)

// The memory of the policies' stateful statements (dedupe, rate_limit,
// sample: docs/language.md, "State") belongs to the processor instance:
// each policy's Store is bound to its program, which every batch's
// Machine shares. When the config names a storage extension
// (`storage: file_storage/…`), the processor loads each Store from it at
// start and saves it at shutdown, once every batch it ran has left it. Not
// while it runs: a state saved then may hold the keys of records not yet
// exported, and after a crash the receiver's retries of those records
// would be dropped as repeats of records that never left. A crash forgets
// the keys since the start instead, which lets repeats through and loses
// no record.

// stateKeeper saves and loads the Stores of a processor's policies.
type stateKeeper struct {
	storage *component.ID // nil: the state lives in memory only
	self    component.ID  // the processor, which names its storage client
	log     *zap.Logger
	stores  []keptStore // the policies that keep state

	client storage.Client
}

// keptStore is a policy's Store and the storage key it is saved under.
type keptStore struct {
	key   string
	store *state.Store
}

func newStateKeeper(cfg *Config, self component.ID, log *zap.Logger, pols []policy) *stateKeeper {
	k := &stateKeeper{storage: cfg.Storage, self: self, log: log}
	seen := map[string]int{}
	for _, p := range pols {
		if p.store == nil {
			continue
		}
		// Keyed by the policy's name, so that reordering the policies
		// keeps each one's state; a name used twice gets a number.
		key := "state/" + p.name
		if seen[p.name]++; seen[p.name] > 1 {
			key = fmt.Sprintf("%s#%d", key, seen[p.name])
		}
		k.stores = append(k.stores, keptStore{key: key, store: p.store})
	}
	return k
}

// start loads the Stores from the storage extension, if the config names
// one. A snapshot that does not load is logged,
// and that policy starts with empty state: a restart forgets at worst,
// it never stops the Collector.
func (k *stateKeeper) start(ctx context.Context, host component.Host) error {
	if len(k.stores) == 0 || k.storage == nil {
		return nil
	}
	ext, ok := host.GetExtensions()[*k.storage]
	if !ok {
		return fmt.Errorf("storage: no extension %s in the Collector's config (service.extensions)", k.storage)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return fmt.Errorf("storage: %s is not a storage extension", k.storage)
	}
	client, err := se.GetClient(ctx, component.KindProcessor, k.self, "")
	if err != nil {
		return fmt.Errorf("storage: %s: %w", k.storage, err)
	}
	k.client = client
	for _, s := range k.stores {
		data, err := client.Get(ctx, s.key)
		if err != nil {
			k.log.Warn("state: cannot read; the policy starts with empty state", zap.String("key", s.key), zap.Error(err))
			continue
		}
		if data == nil {
			continue
		}
		if err := s.store.Restore(data); err != nil {
			k.log.Warn("state: the saved state does not load; the policy starts with empty state", zap.String("key", s.key), zap.Error(err))
		}
	}
	return nil
}

// save writes every Store's snapshot.
func (k *stateKeeper) save(ctx context.Context) error {
	ops := make([]*storage.Operation, len(k.stores))
	for i, s := range k.stores {
		ops[i] = storage.SetOperation(s.key, s.store.Snapshot())
	}
	return k.client.Batch(ctx, ops...)
}

// shutdown saves the Stores and closes the client.
func (k *stateKeeper) shutdown(ctx context.Context) error {
	if k.client == nil {
		return nil
	}
	err := k.save(ctx)
	if err != nil {
		err = fmt.Errorf("state: cannot save at shutdown: %w", err)
	}
	err = errors.Join(err, k.client.Close(ctx))
	k.client = nil
	return err
}
