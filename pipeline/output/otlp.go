package output

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/policyrun/policyrun/record"
)

// OTLPConfig is an otlp output's section: OTLP/HTTP to a Collector, a
// backend or another agent.
type OTLPConfig struct {
	HTTPConfig
	DeliveryConfig
	PlainMapping
	Encoding string // protobuf | json
}

// OTLPPath is the path of OTLP/HTTP logs, put in an endpoint without one.
const OTLPPath = "/v1/logs"

func (c *OTLPConfig) Keys(v Values) map[string]func(*yaml.Node) {
	keys := map[string]func(*yaml.Node){
		"encoding": func(n *yaml.Node) { c.Encoding = v.OneOf(n, "encoding", "protobuf", "json") },
	}
	c.HTTPConfig.keys(keys, v, "endpoint")
	c.DeliveryConfig.keys(keys, v)
	c.PlainMapping.keys(keys, v)
	return keys
}

func (c *OTLPConfig) Check(v Values, line int) {
	c.HTTPConfig.check(v, line, "otlp", "endpoint", OTLPPath)
	c.DeliveryConfig.check(v, line)
}

func init() {
	Register(Factory{
		Name: "otlp",
		NewSettings: func() Settings {
			// Gzip, as the Collector's otlphttp exporter.
			return &OTLPConfig{HTTPConfig: HTTPConfig{Compression: "gzip"}, DeliveryConfig: defaultDelivery(), Encoding: "protobuf"}
		},
		New: func(s Settings, env Env) (Output, error) {
			c := s.(*OTLPConfig)
			ct, asJSON := "application/x-protobuf", c.Encoding == "json"
			if asJSON {
				ct = "application/json"
			}
			var mapping *PlainMapping
			if c.PlainMapping.set() {
				mapping = &c.PlainMapping
			}
			newCodec := func() codec { return &otlpCodec{json: asJSON, mapping: mapping} }
			snd, err := newHTTPSender(&c.HTTPConfig, env, ct, c.Timeout, c.Workers)
			if err != nil {
				return nil, err
			}
			snd.message = OTLPResponse
			return newBuffered(env.Alias, env, c.DeliveryConfig, newCodec, snd)
		},
	})
}

// otlpCodec encodes records as ExportLogsServiceRequests, regrouped by
// resource and scope.
type otlpCodec struct {
	enc     record.OTLPEncoder
	json    bool
	mapping *PlainMapping // nil: plain records' maps are their bodies
	mapped  []*record.Record
}

func (c *otlpCodec) encode(dst []byte, recs []*record.Record) []byte {
	if c.mapping != nil {
		c.mapped = c.mapped[:0]
		for _, r := range recs {
			c.mapped = append(c.mapped, c.mapping.mapPlain(r))
		}
		recs = c.mapped
		defer clear(c.mapped)
	}
	if c.json {
		return c.enc.AppendJSON(dst, recs)
	}
	return c.enc.AppendProto(dst, recs)
}

// reads: OTLP/JSON is written from the records' views; protobuf from an
// OTLP record's bytes where its edits allow (plain records are mapped
// whole, but they do not come from an otlp input).
func (c *otlpCodec) reads() Reading {
	if c.json {
		return ReadsRecords
	}
	return ReadsOTLPWire
}

// jsonHead and jsonTail are what the encoder writes around the resource
// logs of a request in OTLP/JSON.
const (
	jsonHead = `{"resourceLogs":[`
	jsonTail = `]}`
)

// join makes one request of a chunk's: in protobuf, requests concatenated
// are one request holding all their resource logs (protobuf merges
// repeated fields); in JSON, their resourceLogs arrays are spliced.
func (c *otlpCodec) concatenates() bool { return !c.json }

func (c *otlpCodec) join(dst []byte, payloads [][]byte) []byte {
	if len(payloads) == 1 {
		return append(dst, payloads[0]...)
	}
	if !c.json {
		for _, p := range payloads {
			dst = append(dst, p...)
		}
		return dst
	}
	dst = append(dst, jsonHead...)
	first := true
	for _, p := range payloads {
		inner, ok := bytes.CutPrefix(p, []byte(jsonHead))
		if !ok {
			continue // "{}": no records
		}
		inner = bytes.TrimSuffix(inner, []byte(jsonTail))
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, inner...)
	}
	return append(dst, jsonTail...)
}

// OTLPResponse reads an OTLP/HTTP response: on success an
// ExportLogsServiceResponse, whose partial_success says how many records
// were rejected and why; on failure a google.rpc.Status with a message.
func OTLPResponse(status int, contentType string, body []byte) (int64, string) {
	if len(body) == 0 {
		return 0, ""
	}
	isJSON := strings.Contains(contentType, "json")
	if status >= 200 && status < 300 {
		if isJSON {
			var r struct {
				PartialSuccess struct {
					RejectedLogRecords json.RawMessage `json:"rejectedLogRecords"`
					ErrorMessage       string          `json:"errorMessage"`
				} `json:"partialSuccess"`
			}
			if json.Unmarshal(body, &r) != nil {
				return 0, ""
			}
			n, _ := strconv.ParseInt(strings.Trim(string(r.PartialSuccess.RejectedLogRecords), `"`), 10, 64)
			return max(n, 0), r.PartialSuccess.ErrorMessage
		}
		var n int64
		var msg string
		if ps, ok := protoField(body, responsePartialSuccess); ok {
			if v, ok := protoVarint(ps, partialRejected); ok {
				n = int64(v)
			}
			if m, ok := protoField(ps, partialMessage); ok {
				msg = string(m)
			}
		}
		return max(n, 0), msg
	}
	if isJSON {
		var st struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(body, &st) == nil && st.Message != "" {
			return 0, textMessage([]byte(st.Message))
		}
	} else if strings.Contains(contentType, "protobuf") {
		if m, ok := protoField(body, statusMessage); ok {
			return 0, textMessage(m)
		}
	}
	return 0, textMessage(body)
}

// The fields of the answers OTLPResponse reads: ExportLogsServiceResponse
// and its ExportLogsPartialSuccess, and google.rpc.Status.
const (
	responsePartialSuccess = 1
	partialRejected        = 1
	partialMessage         = 2
	statusMessage          = 2
)

// protoField returns the last length-delimited field num of a protobuf
// message (a singular field's last occurrence wins).
func protoField(b []byte, num uint64) ([]byte, bool) {
	var out []byte
	found := false
	eachField(b, func(n, wt uint64, v uint64, data []byte) {
		if n == num && wt == 2 {
			out, found = data, true
		}
	})
	return out, found
}

// protoVarint returns the last varint field num of a protobuf message.
func protoVarint(b []byte, num uint64) (uint64, bool) {
	var out uint64
	found := false
	eachField(b, func(n, wt uint64, v uint64, _ []byte) {
		if n == num && wt == 0 {
			out, found = v, true
		}
	})
	return out, found
}

// eachField walks the fields of a protobuf message, stopping at anything
// it cannot read.
func eachField(b []byte, f func(num, wt, v uint64, data []byte)) {
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			return
		}
		b = b[n:]
		num, wt := tag>>3, tag&7
		switch wt {
		case 0:
			v, n := binary.Uvarint(b)
			if n <= 0 {
				return
			}
			f(num, wt, v, nil)
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return
			}
			b = b[8:]
		case 5:
			if len(b) < 4 {
				return
			}
			b = b[4:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return
			}
			f(num, wt, 0, b[n:n+int(l)])
			b = b[n+int(l):]
		default:
			return
		}
	}
}
