package gen

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/policyrun/policyrun/record"
)

// OTLP log records, the data of B5 (docs/benchmarks.md): requests of
// OTLPBatch records that one service sends (one resource of 5 attributes,
// 3 instrumentation scopes), each record with a kvlist body of 5 entries,
// 10 attributes of every scalar type, a severity and, mostly, a trace
// context.

// OTLPBatch is the number of records of a B5 request.
const OTLPBatch = 100

// OTLP generates OTLP records, deterministically: the same seed gives the
// same records, and the records of a run do not depend on how they are
// asked for (OTLPBatch at a time, one at a time, or all at once).
type OTLP struct {
	rng      *rand.Rand
	now      time.Time
	n        int // records made so far
	services []otlpService
	service  int // the service of the current batch

	// The resources and scopes built in the arena of the current call of
	// Records (an arena may be Reset between calls).
	resources []record.Value
	scopes    []record.Value
	scratch   []byte
}

type otlpService struct {
	name, version, instance, host string
	pid                           int64
}

// otlpScope is an instrumentation scope of every service.
type otlpScope struct{ name, version, schema string }

const otlpSchema = "https://opentelemetry.io/schemas/1.26.0"

var (
	otlpScopes = []otlpScope{
		{"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp", "0.60.0", otlpSchema},
		{"github.com/XSAM/otelsql", "0.38.0", otlpSchema},
		{"app", "", ""},
	}
	severities = map[string]struct {
		text   string
		number int64
	}{"debug": {"DEBUG", 5}, "info": {"INFO", 9}, "warn": {"WARN", 13}, "error": {"ERROR", 17}}
	agents = []string{"Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0", "curl/8.11.0", "Go-http-client/2.0", "okhttp/4.12.0"}
)

// NewOTLP returns a generator of OTLP records for seed.
func NewOTLP(seed uint64) *OTLP {
	g := &OTLP{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), now: Epoch}
	for i, name := range services {
		id := appendHex(nil, g.rng, 32)
		g.services = append(g.services, otlpService{
			name:     name,
			version:  "1." + strconv.Itoa(g.rng.IntN(30)) + "." + strconv.Itoa(g.rng.IntN(10)),
			instance: string(id[0:8]) + "-" + string(id[8:12]) + "-" + string(id[12:16]) + "-" + string(id[16:20]) + "-" + string(id[20:32]),
			host:     "node-" + strconv.Itoa(i) + ".cluster.local",
			pid:      int64(1 + g.rng.IntN(1<<15)),
		})
	}
	return g
}

// OTLPRecords returns the first n records of seed, built in a.
func OTLPRecords(a *record.Arena, n int, seed uint64) []*record.Record {
	return NewOTLP(seed).Records(a, n, nil)
}

// OTLPRequests returns the first n records of seed as protobuf
// ExportLogsServiceRequests of OTLPBatch records (the last one shorter
// when n is not a multiple of OTLPBatch).
func OTLPRequests(n int, seed uint64) [][]byte {
	g := NewOTLP(seed)
	a := record.NewArena()
	var e record.OTLPEncoder
	var out [][]byte
	var recs []*record.Record
	for i := 0; i < n; i += OTLPBatch {
		a.Reset()
		recs = g.Records(a, min(OTLPBatch, n-i), recs[:0])
		out = append(out, e.AppendProto(nil, recs))
	}
	return out
}

// Records appends the next n records, built in a, to dst. The records of
// one batch of OTLPBatch (counted from the generator's first record) come
// from one service; those of one service share its resource Value, and
// those of one scope its scope Value, within one call.
func (g *OTLP) Records(a *record.Arena, n int, dst []*record.Record) []*record.Record {
	g.resources = g.resources[:0]
	g.scopes = g.scopes[:0]
	for range n {
		dst = append(dst, g.record(a))
	}
	return dst
}

func must(err error) {
	if err != nil {
		panic("gen: " + err.Error()) // the paths and values are the view's
	}
}

func (g *OTLP) record(a *record.Arena) *record.Record {
	r := g.rng
	if g.n%OTLPBatch == 0 {
		g.service = r.IntN(len(g.services))
	}
	g.n++
	g.now = g.now.Add(time.Duration(500_000 + r.IntN(1_000_000)))
	str := a.NewStringFrom

	method, status, route := pick(r, methods), pick(r, statuses), pick(r, routes)
	g.scratch = strconv.AppendInt(append(g.scratch[:0], route...), int64(r.IntN(100000)), 10)
	path := a.NewString(g.scratch)
	latency := float64(r.IntN(2_000_000)) / 1000
	body := a.BeginMap(5)
	body.Add(str("msg"), str(pick(r, verbs)))
	body.Add(str("user"), str("user-"+strconv.Itoa(r.IntN(5000))))
	body.Add(str("path"), path)
	body.Add(str("status"), record.IntValue(int64(status)))
	body.Add(str("latency_ms"), record.FloatValue(latency))

	attrs := a.BeginMap(10)
	attrs.Add(str("http.request.method"), str(method))
	attrs.Add(str("http.response.status_code"), record.IntValue(int64(status)))
	attrs.Add(str("http.route"), str(route+"{id}"))
	attrs.Add(str("url.path"), path)
	g.scratch = strconv.AppendInt(append(g.scratch[:0], "10.0."...), int64(r.IntN(256)), 10)
	g.scratch = strconv.AppendInt(append(g.scratch, '.'), int64(r.IntN(256)), 10)
	attrs.Add(str("client.address"), a.NewString(g.scratch))
	attrs.Add(str("server.port"), record.IntValue(8080))
	attrs.Add(str("user_agent.original"), str(pick(r, agents)))
	attrs.Add(str("network.protocol.version"), str([]string{"1.1", "2"}[r.IntN(2)]))
	attrs.Add(str("http.server.request.duration"), record.FloatValue(latency/1000))
	attrs.Add(str("cache.hit"), record.BoolValue(r.IntN(4) == 0))

	rec := a.NewOTLPRecord(body.Finish())
	must(rec.Set(record.OTLPPath(record.ViewAttributes), attrs.Finish()))
	sev := severities[pick(r, levels)]
	must(rec.Set(record.OTLPPath(record.ViewSeverityText), str(sev.text)))
	must(rec.Set(record.OTLPPath(record.ViewSeverityNumber), record.IntValue(sev.number)))
	must(rec.Set(record.OTLPPath(record.ViewObservedTime), record.TimestampValue(g.now.UnixNano()+int64(r.IntN(2_000_000)))))
	if r.IntN(8) != 0 {
		must(rec.Set(record.OTLPPath(record.ViewTraceID), a.NewString(appendHex(g.scratch[:0], r, 32))))
		must(rec.Set(record.OTLPPath(record.ViewSpanID), a.NewString(appendHex(g.scratch[:0], r, 16))))
		must(rec.Set(record.OTLPPath(record.ViewFlags), record.IntValue(1)))
	}
	must(rec.Set(record.OTLPPath(record.ViewResource), g.resource(a, g.service)))
	must(rec.Set(record.OTLPPath(record.ViewScope), g.scope(a, r.IntN(len(otlpScopes)))))
	rec.SetTime(g.now.UnixNano())
	rec.Commit()
	return rec
}

// resource returns the resource of service i, built in a once per call
// of Records.
func (g *OTLP) resource(a *record.Arena, i int) record.Value {
	for len(g.resources) <= i {
		g.resources = append(g.resources, record.Value{})
	}
	if g.resources[i].Kind() == record.Map {
		return g.resources[i]
	}
	s := &g.services[i]
	str := a.NewStringFrom
	attrs := a.BeginMap(5)
	attrs.Add(str("service.name"), str(s.name))
	attrs.Add(str("service.version"), str(s.version))
	attrs.Add(str("service.instance.id"), str(s.instance))
	attrs.Add(str("host.name"), str(s.host))
	attrs.Add(str("process.pid"), record.IntValue(s.pid))
	keys := record.OTLPView()[record.ViewResource].Fields
	m := a.BeginMap(len(keys))
	m.Add(str(keys[record.ViewResAttributes].Name), attrs.Finish())
	m.Add(str(keys[record.ViewResDropped].Name), record.IntValue(0))
	m.Add(str(keys[record.ViewResSchemaURL].Name), str(otlpSchema))
	g.resources[i] = m.Finish()
	return g.resources[i]
}

// scope returns scope i, built in a once per call of Records.
func (g *OTLP) scope(a *record.Arena, i int) record.Value {
	for len(g.scopes) <= i {
		g.scopes = append(g.scopes, record.Value{})
	}
	if g.scopes[i].Kind() == record.Map {
		return g.scopes[i]
	}
	s := &otlpScopes[i]
	str := a.NewStringFrom
	attrs := a.BeginMap(0)
	keys := record.OTLPView()[record.ViewScope].Fields
	m := a.BeginMap(len(keys))
	m.Add(str(keys[record.ViewScopeName].Name), str(s.name))
	m.Add(str(keys[record.ViewScopeVersion].Name), str(s.version))
	m.Add(str(keys[record.ViewScopeAttributes].Name), attrs.Finish())
	m.Add(str(keys[record.ViewScopeDropped].Name), record.IntValue(0))
	m.Add(str(keys[record.ViewScopeSchemaURL].Name), str(s.schema))
	g.scopes[i] = m.Finish()
	return g.scopes[i]
}
