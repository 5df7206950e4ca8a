package protocol

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	readBufSize = 64 << 10
	// flushAt is how much coalesced output the writer buffers before
	// writing even if more replies are queued.
	flushAt = 256 << 10
	// keepBuf is the largest write buffer kept between responses, so one
	// huge response does not pin its buffer for the connection's life.
	keepBuf = 1 << 20
)

// pending is a queued reply.
type pending struct {
	key, version  int16
	correlationID int32
	reply         Reply
	closeAfter    error // non-nil: close the connection after the replies before it (and reply.Response, if set)
	raw           bool  // a bare SASL token answer: no header, just the token
	// mem is the Budget charge of the request's frame, given back once
	// reply.Wait has returned (the handler may use the frame until then);
	// frame is the buffer to reuse then (a Produce frame), or nil.
	mem   frameMem
	frame []byte
}

type conn struct {
	s  *Server
	nc net.Conn // the TCP connection, or TLS over it
	// tcp is the connection under TLS (nc itself without TLS); abort
	// closes it directly, so a write blocked in TLS cannot hold abort up.
	tcp  net.Conn
	info *ConnInfo
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc

	queue    chan pending
	inflight atomic.Int32
	// lastActive is the unix-nano time of the last byte read or written.
	lastActive atomic.Int64
	// authed lifts Config.PreAuthMaxRequestBytes (ConnInfo.SetAuthenticated).
	authed atomic.Bool
	// mutedUntil is the unix-nano time before which the reader must not
	// read (ConnInfo.Mute).
	mutedUntil atomic.Int64
	// mutedFor is the total time the reader has waited out mutes, for
	// tests and stats.
	mutedFor atomic.Int64
	// owner is the principal the connection's frames are charged to in
	// the Budget (ConnInfo.SetBudgetOwner); nil: the connection itself.
	owner atomic.Pointer[string]
	// trusted: the last large frame arrived promptly (readFrame); the
	// reader's own.
	trusted bool

	abortOnce sync.Once

	// onClose are the ConnInfo.OnClose callbacks, by key.
	onCloseMu sync.Mutex
	onClose   map[any]func()
	closed    bool
}

func newConn(s *Server, tcp net.Conn) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	nc := tcp
	setSendBuffer(tcp, s.cfg.SendBufferBytes)
	setKeepAlive(tcp)
	if s.cfg.TLS != nil {
		nc = tls.Server(tcp, s.cfg.TLS)
	}
	c := &conn{
		s:      s,
		nc:     nc,
		tcp:    tcp,
		ctx:    ctx,
		cancel: cancel,
		queue:  make(chan pending, s.cfg.MaxInFlight),
	}
	c.info = &ConnInfo{ID: s.nextID.Add(1), Remote: tcp.RemoteAddr(), Listener: s.cfg.ListenerName, Node: s.cfg.Node, c: c}
	c.log = s.log.With("conn", c.info.ID, "remote", c.info.Remote.String())
	c.lastActive.Store(time.Now().UnixNano())
	return c
}

func (c *conn) run() {
	if tc, ok := c.nc.(*tls.Conn); ok && !c.handshake(tc) {
		c.abort()
		c.s.removeConn(c)
		return
	}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.writeLoop()
	}()
	c.readLoop()
	<-writerDone
	c.abort()
	c.s.removeConn(c)
	c.runOnClose()
}

// runOnClose runs the OnClose callbacks once the connection is gone.
func (c *conn) runOnClose() {
	c.onCloseMu.Lock()
	fns := c.onClose
	c.onClose, c.closed = nil, true
	c.onCloseMu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// handshake runs the TLS handshake before any request is read, so that a
// failure (no client certificate under mutual TLS, a plaintext client) is
// logged as what it is, and ConnInfo.TLS is set before Serve sees the
// connection.
func (c *conn) handshake(tc *tls.Conn) bool {
	tc.SetDeadline(time.Now().Add(c.s.cfg.TLSHandshakeTimeout))
	if c.s.closing.Load() {
		return false // stopReading may have run before our deadline
	}
	if err := tc.HandshakeContext(c.ctx); err != nil {
		if c.s.closing.Load() {
			return false
		}
		// A client that connects and leaves (a port probe, a health
		// check) is not worth a warning; a failed negotiation is.
		level := slog.LevelWarn
		if isEOF(err) {
			level = slog.LevelDebug
		}
		if level == slog.LevelDebug {
			c.log.Debug("TLS handshake failed; closing connection", "err", err)
		} else {
			c.warnClient("TLS handshake failed; closing connection", "err", err)
		}
		return false
	}
	tc.SetDeadline(time.Time{})
	st := tc.ConnectionState()
	c.info.TLS = &st
	c.lastActive.Store(time.Now().UnixNano())
	return true
}

// abort closes the connection now; queued replies are dropped. Under TLS
// it closes the TCP connection without a close_notify, which could block
// behind a stuck write.
func (c *conn) abort() {
	c.abortOnce.Do(func() {
		c.cancel()
		c.tcp.Close()
	})
}

// stopReading makes the reader stop at its next read (graceful shutdown).
// The reader re-checks Server.closing after arming its own deadline, so
// either it sees the flag or this deadline lands after its own.
func (c *conn) stopReading() {
	c.nc.SetReadDeadline(time.Unix(1, 0))
}

// readLoop reads frames and serves them in order until an error, an
// invalid request, shutdown or idle timeout; it then closes the queue so
// the writer finishes the queued replies and closes the connection.
func (c *conn) readLoop() {
	defer close(c.queue)
	defer func() {
		// Unless the server is draining, a reader that stops means the
		// client went away or misbehaved (EOF, bad frame, idle):
		// cancel so pending long polls answer now instead of at their
		// max wait. Their replies are still written, as far as the
		// socket allows.
		if !c.s.closing.Load() {
			c.cancel()
		}
	}()
	budget := c.s.budget
	// Checked once: tracing every request must cost nothing when off.
	trace := c.log.Enabled(context.Background(), slog.LevelDebug)
	br := bufio.NewReaderSize(c.nc, readBufSize)
	var sizeBuf [4]byte
	idle := c.s.cfg.IdleTimeout
	// rawNext: the previous reply asked for the next frame to be read as
	// a bare SASL token (Reply.SASLRaw).
	rawNext := false
	for {
		if !c.waitMuted() {
			return
		}
		// Idle: wait for the next frame's size, re-arming while the
		// connection is busy (a long poll in flight, a recent write).
		deadline := time.Now().Add(idle)
		for {
			c.nc.SetReadDeadline(deadline)
			if c.s.closing.Load() {
				return
			}
			n, err := io.ReadFull(br, sizeBuf[:])
			if err == nil {
				break
			}
			if n == 0 && isTimeout(err) && !c.s.closing.Load() {
				// inflight before lastActive: replyDone moves lastActive
				// first, so seeing nothing in flight guarantees the
				// activity of the reply that just ended is seen too
				// (the other order closed a connection as its long poll
				// was answered).
				if c.inflight.Load() > 0 {
					deadline = time.Now().Add(idle)
					continue
				}
				last := time.Unix(0, c.lastActive.Load())
				if d := last.Add(idle); time.Until(d) > 0 {
					deadline = d
					continue
				}
				c.log.Debug("closing idle connection", "idle", idle)
				return
			}
			if n > 0 || !isEOF(err) && !c.s.closing.Load() {
				c.log.Debug("read failed", "err", err)
			}
			return
		}
		size := int32(binary.BigEndian.Uint32(sizeBuf[:]))
		maxSize := c.s.cfg.MaxRequestBytes
		if pre := c.s.cfg.PreAuthMaxRequestBytes; pre > 0 && !c.authed.Load() {
			maxSize = min(maxSize, pre)
		}
		if size < 0 || size > maxSize {
			// Kafka's InvalidReceiveException: log and close, never
			// allocate what the client claims.
			c.warnClient("request frame size invalid or over the cap; closing connection",
				"size", size, "max", maxSize, "authenticated", c.authed.Load())
			return
		}
		frame, mem, err := c.readFrame(br, int(size), rawNext)
		if err != nil {
			mem.release(budget, nil)
			if !c.s.closing.Load() {
				c.log.Debug("truncated request frame", "size", size, "err", err)
			}
			return
		}
		c.lastActive.Store(time.Now().UnixNano())

		if rawNext {
			// No header: the whole frame is the client's token.
			req := &Request{Key: saslAuthenticateKey, Raw: true, Conn: c.info,
				Body: &kmsg.SASLAuthenticateRequest{SASLAuthBytes: frame}}
			reply := c.s.h.Serve(c.ctx, req)
			// The token may be kept by the handler (SASL state): never reused.
			if reply.Wait == nil {
				mem.release(budget, nil)
			}
			rawNext = reply.SASLRaw
			if reply.Err != nil {
				mem.release(budget, nil)
				c.log.Debug("handler failed on a raw SASL token; closing connection", "err", reply.Err)
				c.enqueue(pending{key: saslAuthenticateKey, closeAfter: reply.Err})
				return
			}
			if reply.Response == nil && reply.Wait == nil {
				continue
			}
			if !c.enqueue(pending{key: saslAuthenticateKey, reply: reply, raw: true, mem: mem}) {
				return
			}
			continue
		}

		h, body, err := parseRequest(frame)
		if err != nil {
			mem.release(budget, nil)
			c.warnClient("invalid request; closing connection",
				"key", h.key, "version", h.version, "correlation_id", h.correlationID, "err", err)
			c.enqueue(pending{closeAfter: err})
			return
		}
		if trace {
			cid := "(null)"
			if h.clientID != nil {
				cid = *h.clientID
			}
			c.log.Debug("request", "key", h.key, "version", h.version,
				"correlation_id", h.correlationID, "client_id", cid, "bytes", size)
		}
		req := &Request{
			Key:           h.key,
			Version:       h.version,
			CorrelationID: h.correlationID,
			ClientID:      h.clientID,
			Body:          body,
			Conn:          c.info,
			Size:          size,
		}
		reply := c.s.h.Serve(c.ctx, req)
		rawNext = reply.SASLRaw
		if reply.Err != nil {
			mem.release(budget, nil)
			// The handler logs its own reasons (once, with the
			// client address); this line is for tracing only.
			c.log.Debug("handler failed; closing connection",
				"key", h.key, "version", h.version, "correlation_id", h.correlationID, "err", reply.Err)
			c.enqueue(pending{key: h.key, version: h.version, correlationID: h.correlationID, closeAfter: reply.Err,
				reply: Reply{Response: reply.Response}})
			return
		}
		// A Produce frame's buffer may be reused once the handler is done
		// with it; other requests may keep slices of their frame (SASL
		// tokens, configs) past Serve: their bytes go back, never the
		// buffer.
		var keep []byte
		if h.key == produceKey {
			keep = frame
		}
		if reply.Wait == nil {
			mem.release(budget, keep)
			keep = nil
		}
		if reply.Response == nil && reply.Wait == nil {
			continue // acks=0: nothing to answer
		}
		if !c.enqueue(pending{key: h.key, version: h.version, correlationID: h.correlationID, reply: reply, mem: mem, frame: keep}) {
			return
		}
	}
}

// waitMuted waits out a mute (ConnInfo.Mute) before the next read: the
// socket is not read, so the client's further requests stay in its and the
// kernel's buffers. It reports false if the connection or server closed
// meanwhile.
func (c *conn) waitMuted() bool {
	until := c.mutedUntil.Load()
	if until == 0 {
		return true
	}
	d := time.Until(time.Unix(0, until))
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	start := time.Now()
	select {
	case <-t.C:
	case <-c.ctx.Done():
		return false
	case <-c.s.closed:
		return false
	}
	c.mutedFor.Add(int64(time.Since(start)))
	c.lastActive.Store(time.Now().UnixNano())
	return true
}

// MutedFor is how long the connection's reader has waited out mutes.
func (ci *ConnInfo) MutedFor() time.Duration {
	if ci.c == nil {
		return 0
	}
	return time.Duration(ci.c.mutedFor.Load())
}

// frameMem is what a frame holds of the Budget, given back once the
// request has been handled.
type frameMem struct {
	small int64
	h     *hold
}

// release gives the frame's memory back; keep is its buffer when it may be
// reused (a Produce frame the handler no longer needs).
func (m *frameMem) release(b *Budget, keep []byte) {
	if m.h != nil {
		if keep != nil && int64(cap(keep)) > smallFrame {
			m.h.release(keep)
		} else {
			m.h.release(nil)
		}
	} else {
		b.releaseSmall(m.small)
	}
	*m = frameMem{}
}

// budgetOwner is whom the connection's frames are charged to for fairness:
// its principal once set (ConnInfo.SetBudgetOwner), else itself.
func (c *conn) budgetOwner() any {
	if p := c.owner.Load(); p != nil {
		return *p
	}
	return c
}

// trustWithin: a connection whose large frame arrived whole within this
// long gets a whole buffer for its next one straight away.
const trustWithin = 250 * time.Millisecond

// readFrame reads a frame of size bytes. A small one is read whole. A large
// one takes no memory until its first bytes are in; then it takes a buffer
// of its whole size when the kernel already holds most of it (or the
// connection's last large frame arrived promptly), and otherwise grows its
// buffer as bytes arrive (Budget). The frame must arrive within the request
// read timeout, not counting time spent waiting for memory. The returned
// frameMem is to be released (also on error).
func (c *conn) readFrame(br *bufio.Reader, size int, raw bool) ([]byte, frameMem, error) {
	budget := c.s.budget
	start := time.Now()
	deadline := start.Add(c.s.cfg.RequestReadTimeout)
	c.nc.SetReadDeadline(deadline)
	if size <= smallFrame {
		budget.chargeSmall(int64(size))
		mem := frameMem{small: int64(size)}
		frame := make([]byte, size)
		_, err := io.ReadFull(br, frame)
		return frame, mem, c.bodyErr(err, size, 0)
	}
	h := budget.newHold(c.budgetOwner())
	mem := frameMem{h: h}
	// A length prefix with nothing behind it takes nothing: wait for the
	// body's first bytes (they land in the read buffer).
	head, err := br.Peek(min(size, readBufSize))
	if err != nil {
		return nil, mem, c.bodyErr(err, size, br.Buffered())
	}
	// A huge Produce frame's buffer is mapped outside the heap (mapFrame):
	// its handler keeps none of its bytes, so it can be unmapped. So are
	// the smaller buffers a huge frame grows through, so that each step
	// grows the mapping (regrow) instead of copying into fresh memory that
	// faults in page by page. Smaller frames keep the heap's warm memory.
	h.mapOK = !raw && int16(binary.BigEndian.Uint16(head)) == produceKey
	whole := int64(bufCap(size))
	here := br.Buffered() + queuedBytes(c.tcp)
	full := c.trusted || here >= size/2
	alloc := func(n int64) []byte {
		if h.mapOK && (n > keepLarge || !full && whole > keepLarge) {
			if b, ok := mapFrame(int(n)); ok {
				h.addMapped(b)
				return b[:0]
			}
		}
		return make([]byte, 0, n)
	}
	want := whole
	if !full {
		// Twice what is here: a body that stops now holds that much.
		want = int64(min(size, max(growStart, roundUp(2*here, smallFrame))))
	}
	var waited time.Duration
	take := func(n int64, wantBuf bool) ([]byte, int64, error) {
		t0 := time.Now()
		buf, g, err := h.acquire(c.ctx, c.s.closed, n, whole, wantBuf)
		if d := time.Since(t0); d > time.Millisecond {
			// Waiting for memory is not the client's slowness.
			waited += d
			deadline = deadline.Add(d)
			c.nc.SetReadDeadline(deadline)
		}
		return buf, g, err
	}
	buf, g, err := take(want, full)
	if err != nil {
		return nil, mem, err
	}
	if g >= whole {
		full = true
	}
	if buf == nil {
		buf = alloc(g)
	}
	if full {
		h.readingWhole(c.evictStalled)
	}
	frame := buf[:0]
	for len(frame) < size {
		if len(frame) == cap(frame) {
			// Growth mode: once more bytes are in, the next buffer, or
			// the whole one once most of the frame is here.
			if _, err := br.Peek(1); err != nil {
				return nil, mem, c.bodyErr(err, size, len(frame))
			}
			next := int64(min(size, 2*cap(frame)))
			if len(frame)+br.Buffered()+queuedBytes(c.tcp) >= size/2 {
				next = whole
			}
			nb, g, err := take(next, true)
			if err != nil {
				return nil, mem, err
			}
			if g >= whole && next != whole {
				next = whole // overdrawn: the whole frame was granted
			}
			if nb == nil {
				if grown, ok := h.regrow(frame, g); ok {
					nb = grown[:len(frame)]
				} else {
					nb = append(alloc(g), frame...)
					h.outgrow(frame)
				}
			} else {
				nb = append(nb, frame...)
				h.outgrow(frame)
			}
			frame = nb
			if next == whole {
				h.readingWhole(c.evictStalled)
			}
		}
		// bufio reads straight into a large destination when it holds
		// nothing buffered, so this costs no extra copy.
		n, err := br.Read(frame[len(frame):min(size, cap(frame))])
		frame = frame[:len(frame)+n]
		if n > 0 {
			h.lastRead.Store(time.Now().UnixNano())
		}
		if err != nil && len(frame) < size {
			return nil, mem, c.bodyErr(err, size, len(frame))
		}
	}
	h.finish()
	c.trusted = time.Since(start)-waited < trustWithin
	return frame, mem, nil
}

// bodyErr logs a frame body that did not arrive in time.
func (c *conn) bodyErr(err error, size, got int) error {
	if err == nil {
		return nil
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if isTimeout(err) && !c.s.closing.Load() {
		c.warnClient("request body not received within the request read timeout; closing connection",
			"size", size, "received", got, "timeout", c.s.cfg.RequestReadTimeout)
	}
	return err
}

// evictStalled closes the connection: its frame holds a whole buffer, has
// received nothing for a while, and others are waiting for the memory. If
// the kernel holds bytes for it, the client is not the one stalling (the
// reader is slow to run), and the connection stays.
func (c *conn) evictStalled() bool {
	if queuedBytes(c.tcp) > 0 {
		return false
	}
	c.warnClient("request body stalled while others wait for request memory; closing connection",
		"stalled_for", stallEvictAfter)
	c.abort()
	return true
}

// warnClient logs a warning a client caused (a bad frame, a stall, a
// failed handshake): the first of a kind at once, then a count per
// interval, so a flood of bad requests costs a few lines (ratelog).
func (c *conn) warnClient(msg string, args ...any) {
	c.s.clientLog.Warn(msg, append([]any{"conn", c.info.ID, "remote", c.info.Remote.String()}, args...)...)
}

// replyDone ends one request in flight. The connection counts as active
// until then: lastActive moves first, so the reader's idle check never
// sees no request in flight with a last activity from before a long poll
// (it used to, and closed connections as idle just as their long-poll
// answer was being written).
func (c *conn) replyDone() {
	c.lastActive.Store(time.Now().UnixNano())
	c.inflight.Add(-1)
}

func (c *conn) enqueue(p pending) bool {
	c.inflight.Add(1)
	select {
	case c.queue <- p:
		return true
	case <-c.ctx.Done():
		c.replyDone()
		p.mem.release(c.s.budget, nil)
		release(p.reply.Response)
		return false
	}
}

// writeLoop writes replies in queue order; after a failure it keeps
// draining (so the reader never blocks) and releases what it drops.
func (c *conn) writeLoop() {
	var buf []byte
	failed := false
	fail := func(msg string, args ...any) {
		if !failed && c.ctx.Err() == nil {
			c.warnClient(msg, args...)
		}
		failed = true
		c.abort()
	}
	flush := func() {
		if len(buf) == 0 || failed {
			buf = buf[:0]
			return
		}
		c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.IdleTimeout))
		if _, err := c.nc.Write(buf); err != nil {
			fail("write failed; closing connection", "err", err)
		}
		c.lastActive.Store(time.Now().UnixNano())
		if cap(buf) > keepBuf {
			buf = nil
		} else {
			buf = buf[:0]
		}
	}
	for p := range c.queue {
		if failed {
			c.drop(p)
			continue
		}
		if p.closeAfter != nil && p.reply.Response == nil {
			flush()
			c.replyDone()
			failed = true
			c.abort()
			continue
		}
		resp := p.reply.Response
		if resp == nil {
			// Flush what is ready before blocking on a long poll or
			// an fsync wait.
			flush()
			r, err := p.reply.Wait()
			p.mem.release(c.s.budget, p.frame)
			if err != nil {
				c.replyDone()
				release(r)
				fail("reply failed; closing connection", "key", p.key, "correlation_id", p.correlationID, "err", err)
				continue
			}
			resp = r
		}
		if resp == nil {
			c.replyDone()
			continue
		}
		start := len(buf)
		if p.raw {
			sa, ok := resp.(*kmsg.SASLAuthenticateResponse)
			c.replyDone()
			if !ok {
				release(resp)
				fail("raw SASL reply is not a SASLAuthenticateResponse; closing connection")
				continue
			}
			buf = binary.BigEndian.AppendUint32(buf, uint32(len(sa.SASLAuthBytes)))
			buf = append(buf, sa.SASLAuthBytes...)
			flush()
			continue
		}
		buf = appendResponseHeader(buf, p.key, p.correlationID, resp.IsFlexible())
		if bw, ok := resp.(BodyWriter); ok {
			n := int64(len(buf)-start-4) + bw.BodyLen()
			binary.BigEndian.PutUint32(buf[start:], uint32(n))
			c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.IdleTimeout))
			err := bw.WriteBody(c.nc, buf)
			buf = buf[:0]
			c.lastActive.Store(time.Now().UnixNano())
			release(resp)
			c.replyDone()
			if err != nil {
				fail("write failed; closing connection", "err", err)
			}
			continue
		}
		buf = resp.AppendTo(buf)
		binary.BigEndian.PutUint32(buf[start:], uint32(len(buf)-start-4))
		release(resp)
		c.replyDone()
		if p.closeAfter != nil {
			// A last answer, then close (a failed SASL exchange).
			flush()
			failed = true
			c.abort()
			continue
		}
		if len(c.queue) == 0 || len(buf) >= flushAt {
			flush()
		}
	}
	flush()
}

// drop disposes of a reply that will not be written: its Wait still runs
// (the connection context is cancelled, so it should return promptly) so the
// handler can release what the response holds.
func (c *conn) drop(p pending) {
	defer c.replyDone()
	if p.reply.Response != nil {
		release(p.reply.Response)
		return
	}
	if p.reply.Wait != nil {
		r, _ := p.reply.Wait()
		p.mem.release(c.s.budget, nil)
		release(r)
	}
}

func release(r kmsg.Response) {
	if rl, ok := r.(Releaser); ok {
		rl.Release()
	}
}

// saslAuthenticateKey is the key a raw SASL token is presented as.
const saslAuthenticateKey = 36

// produceKey: a Produce frame's buffer is reused (or unmapped) once handled
// (its handler copies the batches into the log and keeps nothing of the
// request once Serve, or its Wait, returns).
const produceKey = 0

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}

// setKeepAlive turns TCP keepalive on with the operating system's timings,
// as Kafka's sockets have it. Go's listeners set 15 s on every accepted
// connection, which with thousands of idle client connections is a storm
// of probes for no gain: a dead peer is found by the idle timeout or the
// next write anyway. Go has no "back to the kernel default", so the
// kernel's values are read once (osKeepAlive). A failure changes nothing
// that matters, so it is ignored.
func setKeepAlive(nc net.Conn) {
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetKeepAliveConfig(osKeepAlive())
	}
}

// osKeepAlive is the kernel's keepalive timing: Linux's
// net.ipv4.tcp_keepalive_{time,intvl,probes}, or the 2 h / 75 s / 9 that
// Linux and the BSDs ship with where they cannot be read.
var osKeepAlive = sync.OnceValue(func() net.KeepAliveConfig {
	read := func(name string, def int) int {
		b, err := os.ReadFile("/proc/sys/net/ipv4/" + name)
		if err != nil {
			return def
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || n <= 0 {
			return def
		}
		return n
	}
	return net.KeepAliveConfig{Enable: true,
		Idle:     time.Duration(read("tcp_keepalive_time", 7200)) * time.Second,
		Interval: time.Duration(read("tcp_keepalive_intvl", 75)) * time.Second,
		Count:    read("tcp_keepalive_probes", 9)}
})

// setSendBuffer applies Config.SendBufferBytes to a TCP connection; a
// failure only costs performance, so it is ignored.
func setSendBuffer(nc net.Conn, n int) {
	tc, ok := nc.(*net.TCPConn)
	if !ok || n < 0 {
		return
	}
	if n == 0 {
		n = DefaultSendBufferBytes
	}
	tc.SetWriteBuffer(n)
}
