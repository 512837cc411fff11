package sim

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// ServeHandler answers on ln with h until ctx is cancelled, then calls
// stop (which ends the in-flight requests' delays and stalls) and shuts
// down, waiting for those requests to end (a simulated engine records a
// request when its handler returns). A connection a client opened
// and never sent a request on (Go's Transport dials spares) is closed at
// once: http.Server.Shutdown would wait five seconds for it.
func ServeHandler(ctx context.Context, ln net.Listener, h http.Handler, stop func()) error {
	var mu sync.Mutex
	fresh := map[net.Conn]bool{}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ConnState: func(c net.Conn, st http.ConnState) {
			mu.Lock()
			defer mu.Unlock()
			if st == http.StateNew {
				fresh[c] = true
			} else {
				delete(fresh, c)
			}
		},
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		stop()
		return err
	case <-ctx.Done():
	}
	stop()
	mu.Lock()
	for c := range fresh {
		c.Close()
	}
	mu.Unlock()
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shutCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
