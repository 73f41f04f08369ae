package output

import (
	"go.yaml.in/yaml/v3"

	"github.com/policyrun/policyrun/record"
)

// HTTPOutputConfig is an http output's section: NDJSON (one JSON record a
// line) POSTed to a URL, with the delivery of the otlp output.
type HTTPOutputConfig struct {
	HTTPConfig
	DeliveryConfig
}

func (c *HTTPOutputConfig) Keys(v Values) map[string]func(*yaml.Node) {
	keys := map[string]func(*yaml.Node){}
	c.HTTPConfig.keys(keys, v, "uri")
	c.DeliveryConfig.keys(keys, v)
	return keys
}

func (c *HTTPOutputConfig) Check(v Values, line int) {
	c.HTTPConfig.check(v, line, "http", "uri", "")
	c.DeliveryConfig.check(v, line)
}

func init() {
	Register(Factory{
		Name: "http",
		NewSettings: func() Settings {
			return &HTTPOutputConfig{HTTPConfig: HTTPConfig{Compression: "none"}, DeliveryConfig: defaultDelivery()}
		},
		New: func(s Settings, env Env) (Output, error) {
			c := s.(*HTTPOutputConfig)
			snd, err := newHTTPSender(&c.HTTPConfig, env, "application/x-ndjson", c.Timeout, c.Workers)
			if err != nil {
				return nil, err
			}
			return newBuffered(env.Alias, env, c.DeliveryConfig, func() codec { return ndjson{} }, snd)
		},
	})
}

// ndjson encodes records as JSON lines; payloads join by concatenation.
type ndjson struct{}

func (ndjson) encode(dst []byte, recs []*record.Record) []byte {
	for _, r := range recs {
		dst = r.AppendJSON(dst)
		dst = append(dst, '\n')
	}
	return dst
}

func (ndjson) reads() Reading { return ReadsRecords }

func (ndjson) concatenates() bool { return true }

func (ndjson) join(dst []byte, payloads [][]byte) []byte {
	for _, p := range payloads {
		dst = append(dst, p...)
	}
	return dst
}
