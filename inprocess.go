package minikafka

// How the embedding program's own parts reach the broker without a
// client: single requests straight to the handler (Start's topics, the
// inspection methods, the registry's ACL reads), and an in-process Kafka
// connection for the console and the schema registry, which are Kafka
// clients of the broker. Both skip the listeners' SASL and ACLs: they are
// the program's own, as kfake's control functions are.

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/minikafka/minikafka/broker"
	"github.com/minikafka/minikafka/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// embeddedAddr is the "remote address" of requests Start makes itself.
type embeddedAddr struct{}

func (embeddedAddr) Network() string { return "embedded" }

func (embeddedAddr) String() string { return "minikafka.Start" }

// callBroker sends one request straight to brk's handler, as a client
// connection would.
func callBroker(ctx context.Context, brk *broker.Broker, req kmsg.Request) (kmsg.Response, error) {
	r := &protocol.Request{
		Key:     req.Key(),
		Version: req.GetVersion(),
		Body:    req,
		Conn:    &protocol.ConnInfo{Remote: embeddedAddr{}},
	}
	reply := brk.Serve(ctx, r)
	switch {
	case reply.Err != nil:
		return nil, reply.Err
	case reply.Response != nil:
		return reply.Response, nil
	case reply.Wait != nil:
		return reply.Wait()
	}
	return nil, errors.New("no response")
}

// kafkaPipe is an in-process Kafka connection to the broker: a listener
// without a port, whose connections net.Pipe makes, served as the
// embedding program's own requests (trusted).
type kafkaPipe struct {
	pipes *pipeListener
	srv   *protocol.Server
	done  chan struct{} // closed when Serve returns
}

// openKafkaPipe serves a pipe listener named name (it shows in the
// broker's logs) on brk.
func openKafkaPipe(name string, brk *broker.Broker, log *slog.Logger) (*kafkaPipe, error) {
	p := &kafkaPipe{pipes: newPipeListener(pipeAddr(name)), done: make(chan struct{})}
	srv, err := protocol.Listen(protocol.Config{Listener: p.pipes, ListenerName: name, Logger: log}, trusted{brk, pipeAddr(name)})
	if err != nil {
		p.pipes.Close()
		return nil, err
	}
	p.srv = srv
	go func() {
		defer close(p.done)
		_ = srv.Serve()
	}()
	return p, nil
}

// dial opens a connection to the broker.
func (p *kafkaPipe) dial(ctx context.Context) (net.Conn, error) { return p.pipes.dial(ctx) }

// close ends every connection of the pipe, giving requests in flight a
// moment; nothing to do on nil.
func (p *kafkaPipe) close() {
	if p == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = p.srv.Close(ctx) // closes the pipe listener too: dial fails from here on
	<-p.done
}

// trusted hands the pipe's requests to the broker as the embedding
// program's own: they came over a pipe only this process can dial, so
// the listeners' SASL does not apply (as for Start's own requests). They
// bypass the metrics counters, so the console's reads do not show up as
// client traffic in its own rate charts.
type trusted struct {
	brk  *broker.Broker
	addr pipeAddr
}

func (t trusted) Serve(ctx context.Context, req *protocol.Request) protocol.Reply {
	r := *req
	r.Conn = &protocol.ConnInfo{ID: req.Conn.ID, Remote: t.addr}
	return t.brk.Serve(ctx, &r)
}

// pipeAddr is a pipe's address: its name, "console" or "schema-registry",
// which the broker's logs show as the requests' remote address.
type pipeAddr string

func (pipeAddr) Network() string { return "pipe" }

func (a pipeAddr) String() string { return string(a) }

// pipeListener is a net.Listener whose connections are net.Pipes that
// dial makes: a Kafka listener with no port.
type pipeListener struct {
	addr   pipeAddr
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener(addr pipeAddr) *pipeListener {
	return &pipeListener{addr: addr, conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return l.addr }

func (l *pipeListener) dial(ctx context.Context) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
	case <-ctx.Done():
	}
	server.Close()
	client.Close()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, net.ErrClosed
}
