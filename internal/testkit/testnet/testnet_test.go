package testnet

import (
	"net"
	"testing"
)

func TestFreeAddr(t *testing.T) {
	addr := FreeAddr(t)
	if Dialable(addr) {
		t.Fatalf("%s: something listens", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("%s cannot be listened on: %v", addr, err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	if !Dialable(addr) {
		t.Errorf("%s: no connection to a listener", addr)
	}
}
