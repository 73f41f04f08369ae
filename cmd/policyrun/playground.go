package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/policyrun/policyrun/playground/web"
)

// playgroundCommand is `policyrun playground [--listen ADDR]`.
func playgroundCommand(fl *flag.FlagSet) runFunc {
	listen := fl.String("listen", "127.0.0.1:8080", "the `address` to serve the page on (host:port; port 0 picks one)")
	return func(c *call) int {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err := servePlayground(ctx, *listen, func(addr net.Addr) {
			fmt.Fprintf(c.stderr, "playground at http://%s/\n", displayAddr(addr))
		})
		if err != nil {
			fmt.Fprintf(c.stderr, "policyrun playground: %v\n", err)
			return 2
		}
		return 0
	}
}

// servePlayground serves the page on addr until ctx is done; listening
// is called with the address once it listens.
func servePlayground(ctx context.Context, addr string, listening func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: web.Handler(), ReadHeaderTimeout: 10 * time.Second}
	listening(ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shutCtx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// displayAddr is addr as a browser's address: a wildcard host (":8080",
// "0.0.0.0:8080") as localhost.
func displayAddr(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return addr.String()
	}
	if tcp.IP == nil || tcp.IP.IsUnspecified() {
		return net.JoinHostPort("localhost", fmt.Sprint(tcp.Port))
	}
	return tcp.String()
}
