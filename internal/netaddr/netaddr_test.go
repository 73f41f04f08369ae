package netaddr

import "testing"

func TestInCIDR(t *testing.T) {
	for _, tc := range []struct {
		ip, cidr string
		want     bool
	}{
		{"10.1.2.3", "10.0.0.0/8", true},
		{"11.1.2.3", "10.0.0.0/8", false},
		{"10.1.2.3", "10.9.9.9/8", true},
		{"10.1.2.3", "10.1.2.3/32", true},
		{"10.1.2.3", "10.1.2.3", false},
		{"::ffff:10.1.2.3", "10.0.0.0/8", true},
		{"::ffff:10.1.2.3", "::ffff:0:0/96", true},
		{"10.1.2.3", "::ffff:0:0/96", false},
		{"2001:db8::1", "2001:db8::/32", true},
		{"2001:db9::1", "2001:db8::/32", false},
		{"fe80::1%eth0", "fe80::/10", false},
		{"010.1.2.3", "10.0.0.0/8", false},
		{"", "0.0.0.0/0", false},
		{"1.2.3.4", "0.0.0.0/0", true},
		{"1.2.3.4", "0.0.0.0/33", false},
		{"1.2.3.4", "", false},
	} {
		if got := InCIDR(tc.ip, tc.cidr); got != tc.want {
			t.Errorf("InCIDR(%q, %q) = %v", tc.ip, tc.cidr, got)
		}
	}
	if n := testing.AllocsPerRun(10, func() { InCIDR("2001:db8::1", "2001:db8::/32") }); n != 0 {
		t.Errorf("%.1f allocs", n)
	}
}

func TestIs(t *testing.T) {
	for _, tc := range []struct {
		s      string
		v4, v6 bool
	}{
		{"1.2.3.4", true, false},
		{"255.255.255.255", true, false},
		{"256.1.1.1", false, false},
		{"1.2.3", false, false},
		{"::1", false, true},
		{"::ffff:1.2.3.4", false, true},
		{"fe80::1%eth0", false, false},
		{"[::1]", false, false},
		{"", false, false},
		{" 1.2.3.4", false, false},
	} {
		if IsIPv4(tc.s) != tc.v4 || IsIPv6(tc.s) != tc.v6 {
			t.Errorf("%q: is_ipv4 %v, is_ipv6 %v", tc.s, IsIPv4(tc.s), IsIPv6(tc.s))
		}
	}
}
