// Package ratelog keeps log lines that clients can cause from flooding the
// log. A client that sends 20 000 bad requests a second must cost the
// operator a line or two per interval, not 20 000.
//
// A Limiter groups lines by key (by default the message; the message of a
// call site is a constant, so the set of keys stays small). The first line
// of a key is written at once. Further lines of that key within the
// interval are only counted; when the interval ends, one summary line
// reports how many were held back:
//
//	msg="metadata: invalid topic name" client=127.0.0.1:50312 topic=a*b
//	msg="metadata: invalid topic name (and 19999 more like it in the last 10s)" client=127.0.0.1:50318 topic=a*b suppressed=19999
//
// The summary carries the attributes of the last line it stands for. While
// a flood goes on, each interval yields one summary line; an interval with
// nothing held back ends the suppression, so the next line of that key is
// written at once again.
//
// The number of keys is bounded (MaxKeys); lines of keys beyond it share
// one overflow key so that no input can grow the table.
//
// Usage:
//
//	rl := ratelog.New(logger, 10*time.Second)
//	defer rl.Close() // writes summaries still pending
//	rl.Warn("metadata: invalid topic name", "client", addr, "topic", name)
//	rl.Log(ctx, slog.LevelInfo, "connection closed unserved", "client", addr)
//	rl.LogKey(ctx, slog.LevelWarn, "sasl-fail", "SASL "+mech+" failed", ...)
//
// A nil *Limiter is valid and drops every line.
package ratelog
