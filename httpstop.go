package minikafka

import (
	"context"
	"net/http"
	"time"
)

// shutdownHTTP stops srv, letting requests in flight finish for up to
// grace (a wait or a long poll that does not is cut off), then waits for
// its Serve loop, which closes done, to return.
func shutdownHTTP(srv *http.Server, done <-chan struct{}, grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		srv.Close()
	}
	<-done
}
