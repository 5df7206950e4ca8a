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
package telemetry
