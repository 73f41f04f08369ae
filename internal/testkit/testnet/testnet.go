// Package testnet finds loopback addresses for tests of servers and of
// whole processes that listen.
package testnet

import (
	"net"
	"testing"
)

// FreeAddr is a loopback address with a port nothing listens on (the
// port of a listener just closed: another test may take it, rarely).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Dialable reports whether a TCP connection to addr is accepted.
func Dialable(addr string) bool {
	conn, err := net.Dial("tcp", addr)
	if err == nil {
		conn.Close()
	}
	return err == nil
}
