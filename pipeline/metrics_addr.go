package pipeline

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/policyrun/policyrun/pipeline/config"
)

// lookupIP resolves localhost for the metrics endpoint; tests replace it.
var lookupIP = net.DefaultResolver.LookupIPAddr

// metricsListenAddr turns a metrics address into the address to listen on:
// an IP address as it is (loopback, or another written out, which is the
// user's choice and is warned about), localhost as the first loopback
// address it resolves to, IPv4 first. localhost never binds an address
// that is not loopback: if it resolves to none, that is an error.
func (p *Pipeline) metricsListenAddr(ctx context.Context, addr string) (string, error) {
	host, port, err := config.SplitMetricsAddr(addr)
	if err != nil {
		return "", err
	}
	if ip := net.ParseIP(host); ip != nil {
		if !ip.IsLoopback() {
			p.log.Warn("metrics endpoint on a non-loopback address: it has no authentication", "addr", addr)
		}
		return addr, nil
	}
	ips, err := lookupIP(ctx, host)
	if err != nil {
		return "", fmt.Errorf("metrics address %q: %w", addr, err)
	}
	var pick net.IP
	var others []string
	for _, a := range ips {
		switch {
		case !a.IP.IsLoopback():
			others = append(others, a.IP.String())
		case pick == nil || pick.To4() == nil && a.IP.To4() != nil:
			pick = a.IP
		}
	}
	if pick == nil {
		return "", fmt.Errorf("metrics address %q: localhost resolves to %v, no loopback address; write 127.0.0.1:%d", addr, others, port)
	}
	if len(others) > 0 {
		p.log.Warn("localhost also resolves to addresses that are not loopback; the metrics endpoint listens on the loopback one only",
			"addr", addr, "listen", pick.String(), "ignored", others)
	}
	return net.JoinHostPort(pick.String(), strconv.Itoa(port)), nil
}
