// Package netaddr is the policy built-ins is_ipv4, is_ipv6 and ip_in_cidr:
// the one implementation of each behind the VM's, the Lua backend's and
// the checker's (which reads a constant CIDR when the policy is checked).
package netaddr

import (
	"errors"
	"net/netip"
	"strings"
)

// IsIPv4 reports whether s is an IPv4 address in dotted decimal: four
// numbers 0-255 without leading zeros ("10.0.0.1", not "010.0.0.1").
func IsIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4()
}

// IsIPv6 reports whether s is an IPv6 address (RFC 4291 text, "::"
// shorthand and a trailing dotted IPv4 allowed, "::ffff:10.0.0.1"
// included), without a zone.
func IsIPv6(s string) bool {
	if strings.IndexByte(s, '%') >= 0 {
		return false // a zone: parsing one allocates, and it is no address of a CIDR
	}
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6()
}

// ParseCIDR reads a CIDR block "addr/bits"; host bits may be set
// ("10.1.2.3/8" is 10.0.0.0/8).
func ParseCIDR(s string) (netip.Prefix, error) {
	if strings.IndexByte(s, '/') < 0 {
		return netip.Prefix{}, errors.New("no /bits: a single address is addr/32 (IPv4) or addr/128 (IPv6)")
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return p, err
	}
	return p.Masked(), nil
}

// InCIDR is ip_in_cidr(ip, cidr): whether ip is an address in the block
// cidr. An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is also its IPv4
// address. It is false when ip is not an address or cidr not a block.
func InCIDR(ip, cidr string) bool {
	if strings.IndexByte(ip, '%') >= 0 {
		return false
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	p, err := ParseCIDR(cidr)
	if err != nil {
		return false
	}
	return p.Contains(a) || a.Is4In6() && p.Contains(a.Unmap())
}
