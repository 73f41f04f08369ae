package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/policyrun/policyrun/internal/testkit/testfs"
	"github.com/policyrun/policyrun/internal/testkit/testnet"
)

// Past one machine (docs/collector.md): a front Collector's load_balancing
// exporter, routing on a log attribute, in front of two gateways that run
// the policyrun processor, sends every record of a key to one gateway, so
// that what a gateway remembers of a key it has seen whole. Three real
// Collectors of this distribution run here, over real gRPC and HTTP.
func TestLoadBalancingKeyAffinity(t *testing.T) {
	const users, requests, per = 25, 20, 50
	at, total := loadBalanced(t, "policy \"gateway\"\nparam name: string\nschema otlp\nset .attributes.gateway = name\n", users, requests, per)
	if total != requests*per {
		t.Fatalf("the gateways wrote %d records, want %d", total, requests*per)
	}
	seen := map[string]bool{}
	for user, gws := range at {
		if len(gws) != 1 {
			t.Errorf("user %s reached gateways %v", user, gws)
		}
		for gw := range gws {
			seen[gw] = true
		}
	}
	if len(at) != users || len(seen) != 2 {
		t.Errorf("%d users over gateways %v, want %d over both", len(at), seen, users)
	}
}

// The point of the routing: a dedupe on the gateways keeps each user's
// first record once over both, as one instance would (docs/collector.md).
func TestLoadBalancingDedupe(t *testing.T) {
	const users, requests, per = 25, 20, 50
	at, total := loadBalanced(t, "policy \"gateway\"\nparam name: string\nschema otlp {\n  attributes: { \"user.id\": string?, ... }\n}\n"+
		"dedupe by .attributes.\"user.id\" within \"1h\"\nset .attributes.gateway = name\n", users, requests, per)
	if total != users {
		t.Errorf("the gateways kept %d records, want %d (one a user): %v", total, users, at)
	}
	for user, gws := range at {
		if n := gws["a"] + gws["b"]; n != 1 {
			t.Errorf("user %s kept %d times: %v", user, n, gws)
		}
	}
}

// loadBalanced runs a front Collector routing on user.id in front of two
// gateways running policy (with the param name: a or b), sends requests
// of per records over users, and returns what the gateways wrote: user →
// gateway → records, and the total. It waits until the total stops
// growing.
func loadBalanced(t *testing.T, policy string, users, requests, per int) (map[string]map[string]int, int) {
	if testing.Short() {
		t.Skip("runs three Collectors")
	}
	dir := t.TempDir()
	policyFile := filepath.Join(dir, "gateway.policy")
	testfs.Write(t, policyFile, policy)
	var gateways []string
	for _, name := range []string{"a", "b"} {
		port := testnet.FreeAddr(t)
		gateways = append(gateways, port)
		runCollector(t, filepath.Join(dir, name+".yaml"), otlpReceiver("grpc", port)+fmt.Sprintf(`processors:
  policyrun:
    policies: [%s]
    params: {name: %s}
exporters:
  file:
    path: %s
    flush_interval: 100ms
`, policyFile, name, filepath.Join(dir, name+".json"))+
			logsService("receivers: [otlp]", "processors: [policyrun]", "exporters: [file]"))
	}
	front := testnet.FreeAddr(t)
	runCollector(t, filepath.Join(dir, "front.yaml"), otlpReceiver("http", front)+fmt.Sprintf(`exporters:
  load_balancing:
    routing_key: attributes
    routing_attributes: [user.id]
    protocol:
      otlp:
        tls: {insecure: true}
    resolver:
      static:
        hostnames: [%s]
`, strings.Join(gateways, ", "))+
		logsService("receivers: [otlp]", "exporters: [load_balancing]"))

	for i := range requests {
		ld := plog.NewLogs()
		lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
		for j := range per {
			lr := lrs.AppendEmpty()
			lr.Attributes().PutStr("user.id", fmt.Sprintf("u%02d", (i*per+j)%users))
			lr.Body().SetStr(fmt.Sprintf("record %d", i*per+j))
		}
		body, err := new(plog.ProtoMarshaler).MarshalLogs(ld)
		if err != nil {
			t.Fatal(err)
		}
		post(t, "http://"+front+"/v1/logs", body)
	}

	// The front answers once the load_balancing exporter has sent, and
	// the file exporters flush every 100 ms: the count is final once it
	// holds for a second.
	deadline := time.Now().Add(60 * time.Second)
	var at map[string]map[string]int
	total, last, steady := 0, -1, time.Now()
	for time.Now().Before(deadline) {
		at, total = map[string]map[string]int{}, 0
		for _, name := range []string{"a", "b"} {
			for _, rec := range fileRecords(t, filepath.Join(dir, name+".json")) {
				if rec.gateway != name {
					t.Fatalf("a record in %s.json says gateway %q", name, rec.gateway)
				}
				if at[rec.user] == nil {
					at[rec.user] = map[string]int{}
				}
				at[rec.user][name]++
				total++
			}
		}
		if total != last {
			last, steady = total, time.Now()
		} else if total > 0 && time.Since(steady) > time.Second {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return at, total
}

// otlpReceiver is the receivers section of a Collector config: one otlp
// receiver of one protocol (grpc, http) listening on endpoint.
func otlpReceiver(protocol, endpoint string) string {
	return "receivers:\n  otlp:\n    protocols:\n      " + protocol + ":\n        endpoint: " + endpoint + "\n"
}

// logsService is the service section of a Collector config: its own
// telemetry quiet, and one logs pipeline of the components given, each
// kind as "receivers: [otlp]".
func logsService(components ...string) string {
	s := "service:\n  telemetry:\n    metrics: {level: none}\n    logs: {level: warn}\n  pipelines:\n    logs:\n"
	for _, c := range components {
		s += "      " + c + "\n"
	}
	return s
}

// runCollector writes config to path and runs the distribution with it
// until the test ends, and waits until it is running.
func runCollector(t *testing.T, path, config string) {
	t.Helper()
	testfs.Write(t, path, config)
	set := settings()
	set.ConfigProviderSettings.ResolverSettings.URIs = []string{"file:" + path}
	set.ConfigProviderSettings.ResolverSettings.DefaultScheme = ""
	col, err := otelcol.NewCollector(set)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- col.Run(context.Background()) }()
	t.Cleanup(func() {
		col.Shutdown()
		if err := <-done; err != nil {
			t.Errorf("%s: %v", filepath.Base(path), err)
		}
	})
	for col.GetState() != otelcol.StateRunning {
		select {
		case err := <-done:
			t.Fatalf("%s: %v", filepath.Base(path), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// post sends an OTLP/HTTP protobuf request, retrying while the front's
// exporter has no gateway yet.
func post(t *testing.T, url string, body []byte) {
	t.Helper()
	for try := 0; ; try++ {
		resp, err := http.Post(url, "application/x-protobuf", bytes.NewReader(body))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			err = fmt.Errorf("%s", resp.Status)
		}
		if try == 50 {
			t.Fatalf("POST %s: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type gatewayRecord struct{ user, gateway string }

// fileRecords reads what a file exporter wrote: OTLP/JSON lines.
func fileRecords(t *testing.T, path string) []gatewayRecord {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []gatewayRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		ld, err := new(plog.JSONUnmarshaler).UnmarshalLogs(sc.Bytes())
		if err != nil {
			return out // a line being written
		}
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			sls := rls.At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					a := lrs.At(k).Attributes()
					u, _ := a.Get("user.id")
					g, _ := a.Get("gateway")
					out = append(out, gatewayRecord{u.Str(), g.Str()})
				}
			}
		}
	}
	return out
}
