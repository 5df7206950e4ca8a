// Package protocol is minikafka's wire server: it accepts TCP connections,
// splits the byte stream into Kafka frames, parses request headers, decodes
// request bodies with kmsg and hands them to a Handler; it encodes the
// responses and writes them back in request order.
//
// # Frames and headers
//
// Every request and response is a frame: a big-endian int32 length followed
// by that many bytes. The length is checked against Config.MaxRequestBytes
// (Kafka's socket.request.max.bytes, 100 MiB by default) before any buffer
// is allocated; a frame over the cap, or with a negative length, is logged
// and the connection closed, as Kafka does.
//
// Frame memory is charged to a Budget (Kafka's queued.max.request.bytes,
// 100 MiB by default, shared by the Servers of a broker) for what it
// actually holds, never for what a length prefix claims. A frame of up to
// 64 KiB is read whole and never waits, so ApiVersions, SASL, metadata,
// heartbeats and commits are never queued behind large requests. A larger
// frame takes nothing until its first 64 KiB have arrived; then it gets a
// buffer of its whole size when most of it is already in the kernel's
// receive queue (or its connection's last large frame arrived promptly),
// and otherwise a buffer that grows as its bytes arrive, so a body that
// stops arriving holds about twice what it sent. Requests that do not fit
// wait, the connection or principal (ConnInfo.SetBudgetOwner) holding
// least served first. When only frames still being read stand in the way,
// the first waiter is let past the limit after 100 ms, one frame at a
// time (half-read frames can never deadlock); a frame holding a whole
// buffer that receives nothing for 5 s while others wait has its
// connection closed; and every frame must arrive within
// Config.RequestReadTimeout (30 s), time waiting for memory aside, or its
// connection is closed with a log line. The charge is given back when the
// request has been handled (after Reply.Wait for a reply that has one);
// Produce buffers are reused, and those over 16 MiB live outside the Go
// heap so that their memory goes back to the system when released. Frame
// memory is thus bounded by the budget plus one frame, plus 64 KiB of read
// buffer and one small frame per connection.
//
// A request frame starts with a header:
//
//	v0: api_key int16, api_version int16, correlation_id int32
//	v1: v0 + client_id nullable string (int16 length, -1 = null)
//	v2: v1 + tagged fields (uvarint count, then {uvarint tag, uvarint size, bytes})
//
// The header version follows from the key and version: v2 when the request is
// flexible (KIP-482; kmsg's IsFlexible at that version), v0 only for
// ControlledShutdown v0, v1 otherwise. The client id stays a classic int16
// string even in v2, a quirk of the protocol. Response headers are v0
// (correlation id) or v1 (v0 + empty tagged fields) when the response is
// flexible — except ApiVersions, which always answers with v0 so that a
// client that does not yet know the broker's versions can parse the answer.
//
// # Bad input
//
// An unknown api key, a version newer than kmsg can decode, or a body kmsg
// cannot decode closes that connection (after the responses to the requests
// before it were written); other connections are untouched. ApiVersions is
// the exception: a version kmsg cannot decode still reaches the Handler, as
// an empty ApiVersionsRequest carrying the client's version, so the broker
// can answer v0 with UNSUPPORTED_VERSION and its ranges (KIP-511).
//
// # Concurrency
//
// Each connection has a reader and a writer goroutine. The reader reads
// frames and calls Handler.Serve in arrival order (produce ordering and
// idempotent sequence numbers depend on it), then queues the Reply; at most
// Config.MaxInFlight replies wait in the queue, after which the reader stops
// reading (back-pressure on the client). The writer takes replies in order,
// calls Reply.Wait when the response is not ready yet (long-poll fetch,
// acks=all waiting for fsync), encodes into a reused buffer and writes each
// frame with a single write; responses that are already available when the
// queue is non-empty are coalesced into one write. Before blocking in a
// Wait, the writer flushes what it has.
//
// A response may implement BodyWriter to write its own body to the
// connection, and Releaser to give back resources once written or dropped.
// That is the whole of protocol's part in the fetch path: the broker's
// large Fetch responses (broker/fetchbody.go) are BodyWriters that send
// their segment-file ranges with sendfile(2) at explicit offsets
// (broker/sendfile_linux.go), copying where the connection or the file is
// not a descriptor. protocol hands them the connection itself and nothing
// else.
//
// # TLS and SASL
//
// With Config.TLS every connection is TLS; the handshake runs before the
// first request is read (bounded by TLSHandshakeTimeout) and its failure —
// a client without a certificate under mutual TLS, a plaintext client — is
// logged and closes that connection. ConnInfo.TLS then holds the state.
// A BodyWriter needs nothing special: the connection it gets is then a
// *tls.Conn, which is not a syscall.Conn, so file ranges are copied through
// the TLS layer instead of handed to sendfile(2), which would bypass
// encryption.
//
// SASL itself is the Handler's (broker/sasl.go); protocol only provides
// what the wire needs: ConnInfo.Auth for the handler's per-connection
// state, Config.PreAuthMaxRequestBytes (a frame cap until
// ConnInfo.SetAuthenticated, Kafka's sasl.server.max.receive.size), and
// the unframed tokens that follow SaslHandshake v0: after a Reply with
// SASLRaw, the next frame is handed over as a Raw request whose body is
// the token, and its answer is written as a bare size-prefixed token with
// no response header.
//
// # Listeners
//
// One Server is one listener. Several listeners (Kafka's listeners with
// different security protocols or advertised addresses) are several
// Servers sharing one Handler; Config.ListenerName is copied into every
// ConnInfo so the Handler knows which listener a request came in on.
//
// # Timeouts and shutdown
//
// A connection with no request in flight and no traffic either way for
// Config.IdleTimeout (Kafka's connections.max.idle.ms, 10 minutes) is closed.
// Server.Close stops accepting, stops reading new requests, lets each
// connection write the replies to requests already read (calling their Wait),
// then closes them; if its context ends first, the remaining connections are
// closed at once and their contexts cancelled.
package protocol
