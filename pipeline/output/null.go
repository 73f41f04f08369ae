package output

import (
	"context"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/policyrun/policyrun/record"
)

// NullConfig is a null output's section.
type NullConfig struct {
	// Encode: each record is encoded as JSON, as a real output would, and
	// its bytes counted; false counts records only (as Fluent Bit's null
	// and the Collector's nop exporter do).
	Encode bool
	// Buffered: the section has buffer keys. The null output then puts
	// each batch, encoded as an OTLP protobuf request, in that buffer
	// and its workers "deliver" it by counting: it measures what a
	// buffer costs.
	Buffered bool
	DeliveryConfig
}

func (c *NullConfig) Keys(v Values) map[string]func(*yaml.Node) {
	keys := map[string]func(*yaml.Node){
		"encode": func(n *yaml.Node) { c.Encode = v.Bool(n) },
	}
	all := map[string]func(*yaml.Node){}
	c.DeliveryConfig.keys(all, v)
	for k, set := range all {
		if k == "buffer" || strings.HasPrefix(k, "buffer.") || k == "workers" {
			keys[k] = func(n *yaml.Node) {
				c.Buffered = true
				set(n)
			}
		}
	}
	return keys
}

func (c *NullConfig) Check(v Values, line int) {
	if c.Buffered && !c.Encode {
		v.Errorf(line, "a null output with a buffer encodes what it buffers: encode: false takes no buffer keys")
	}
	c.DeliveryConfig.check(v, line)
}

func init() {
	Register(Factory{
		Name:        "null",
		NewSettings: func() Settings { return &NullConfig{Encode: true, DeliveryConfig: defaultDelivery()} },
		New: func(s Settings, env Env) (Output, error) {
			c := s.(*NullConfig)
			if c.Buffered {
				return newBuffered(env.Alias, env, c.DeliveryConfig, func() codec { return &otlpCodec{} }, discard{})
			}
			return &nullOutput{n: &Null{}, encode: c.Encode}, nil
		},
	})
}

// discard is the sender of a buffered null output.
type discard struct{}

func (discard) send(_ context.Context, body []byte) sendResult {
	return sendResult{kind: delivered, sent: len(body)}
}

// nullOutput is the null output: safe for concurrent Writes (each encodes
// into a buffer of its own).
type nullOutput struct {
	n      *Null
	encode bool
	bufs   sync.Pool
}

// Reads: with encode: false, a null output counts records only.
func (o *nullOutput) Reads() Reading {
	if o.encode {
		return ReadsRecords
	}
	return ReadsNothing
}

func (o *nullOutput) Start(context.Context) error    { return nil }
func (o *nullOutput) Shutdown(context.Context) error { return nil }

func (o *nullOutput) Write(_ context.Context, recs []*record.Record, _ WriteOptions) (Result, error) {
	if !o.encode {
		o.n.records.Add(int64(len(recs)))
		return Result{}, nil
	}
	b, _ := o.bufs.Get().(*[]byte)
	if b == nil {
		b = new([]byte)
	}
	o.n.write(recs, b)
	o.bufs.Put(b)
	return Result{}, nil
}

func (o *nullOutput) Stats() Stats {
	r, b := o.n.Stats()
	return Stats{Records: r, Bytes: b}
}

// Null encodes each record, as a real output would, and throws it away: it
// measures the pipeline without the cost of I/O.
type Null struct {
	counts
	buf []byte
}

// NewNull returns a null output.
func NewNull() *Null { return &Null{} }

func (*Null) Name() string { return "null" }

func (n *Null) Write(recs []*record.Record) error {
	n.write(recs, &n.buf)
	return nil
}

func (n *Null) write(recs []*record.Record, buf *[]byte) {
	var total int64
	for _, r := range recs {
		*buf = r.AppendJSON((*buf)[:0])
		total += int64(len(*buf)) + 1
	}
	n.records.Add(int64(len(recs)))
	n.bytes.Add(total)
}

func (*Null) Close() error { return nil }
