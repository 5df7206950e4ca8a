// Package telemetry keeps the metrics clients push to the broker (KIP-714,
// client metrics and observability) so /metrics can show every client's
// own view of itself beside the broker's.
//
// A client asks for its subscription (GetTelemetrySubscriptions), is given
// a client instance ID, the metric name prefixes wanted and a push
// interval, and then pushes (PushTelemetry) an OpenTelemetry
// MetricsData protobuf, possibly compressed, once per interval; its last
// push says Terminating.
//
// Model: a Registry holds one Instance per client instance ID with the
// subscription it was given, the timestamps Kafka's interval checks need
// and its series, keyed by metric name and attributes. Gauges keep the
// last value; sums with delta temporality (what the broker asks for, as
// Kafka does) are added up so a series is the client's total since it
// started, cumulative sums replace. Histograms and summaries keep their
// count and sum. Instances that stop pushing for three intervals, or
// that sent their terminating push one interval ago, are dropped, and
// the registry holds at most MaxInstances instances of MaxSeries series
// each: memory stays bounded whatever clients send.
//
// Decode is a hand-written reader of the protobuf wire format for the
// few OTLP messages involved; fields it does not know are skipped, as
// protobuf requires. It keeps nothing on disk.
//
// Why not go.opentelemetry.io/proto/otlp with google.golang.org/protobuf:
// proto.Unmarshal builds the whole MetricsData before anything can count
// its points, and has no limit but nesting depth. An empty data point is
// 2 bytes on the wire and some 170 bytes as a Go message, so the 4 MiB a
// decompressed push may hold (4 × telemetry.max.bytes) becomes about
// 360 MB of allocation (measured: 2 M empty gauge points, 85× the
// payload), per push and per connection pushing. Decode walks the wire
// bytes one point at a time, allocates only for points it keeps, stops at
// maxPoints, maxAttrs and maxDepth, and needs no generated code (the
// library would add some 160 KB to the binary with otlp v1.3.1, the last
// release that does not require a newer protobuf than the module's).
// Keeping a bound with the library would mean scanning the wire format by
// hand first, which is most of this decoder.
package telemetry
