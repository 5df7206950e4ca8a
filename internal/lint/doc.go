// Package lint holds tests that check the module's source as a whole, so
// that rules the design states hold without anyone remembering them (as
// pebble's internal/lint does). It has no code of its own.
//
// The import rules (DESIGN.md, "Imports point one way") are checked by
// parsing every .go file of the module, test files and files behind any
// build constraint included, and failing with the file, line and import of
// each violation:
//
//   - logstore, groupstore, spool and the internal packages below them
//     import no Kafka protocol or client code (nothing from franz-go:
//     kmsg and kerr themselves, and kgo, kadm or kfake, which bring kmsg
//     in) and no package of this module outside that set (protocol,
//     broker and everything under it, the root package, minikafkatest,
//     cmd, internal/bench).
//   - Their tests may import franz-go, as an independent reference
//     (internal/records checks its codec against kmsg) or to drive a real
//     cluster, but still nothing of this module above storage: a test that
//     needs the broker belongs with the broker's tests.
//   - The group coordinators, broker/internal/groups and broker/internal/share
//     and anything under them, import neither broker nor protocol, tests
//     included; the rule is checked whenever that directory exists.
//   - So does the transaction coordinator, broker/internal/txn: it sees
//     partitions, producer IDs and the group coordinator only through the
//     interfaces it declares. Like groups it takes kmsg requests (the
//     broker's handlers are thin adapters), and may use the storage
//     packages.
//   - The uplink, broker/uplink and anything under it, imports nothing of
//     the broker but itself (neither broker nor its internal packages),
//     nor protocol, the root package, cmd, minikafkatest, internal/bench
//     or internal/console, tests included: it is a client of the upstream
//     cluster (franz-go's kgo, kadm, kmsg are its to use) that sees the
//     broker only through the interfaces it declares.
//   - SASL, broker/internal/sasl (mechanisms, the SCRAM store) and the
//     OAUTHBEARER token validator broker/internal/oauth, import neither
//     broker nor protocol nor anything of franz-go, tests included: they
//     take a client's token and return the answer, and the connection
//     state machine and the Kafka error codes stay in the broker.
//   - Fault injection, broker/internal/faults, the request log,
//     broker/internal/reqlog, the client quotas, broker/internal/quota,
//     record inspection, broker/internal/inspect, the fetch session
//     cache, broker/internal/fetchsession, and the topic and dynamic
//     broker configs, broker/internal/topicconfig and
//     broker/internal/brokerconfig, import neither broker nor protocol,
//     tests included: they take decoded kmsg requests, answers, records
//     and config values, and dispatch and connections stay in the broker.
//   - The config resources, broker/internal/configs (describing and
//     altering topic, broker, group and client-metrics configs, the
//     dynamic broker configs' and subscriptions' files), import neither
//     broker nor protocol, tests included: they see topics, the share
//     coordinator and the nodes through the interfaces they declare, and
//     authorization stays in the broker's handlers.
//   - The authorizer, broker/internal/acl (bindings, decisions, the
//     per-connection decision cache, the whole-request and per-topic
//     checks), and delegation tokens, broker/internal/dtoken, import
//     neither broker nor protocol, tests included: they take decoded kmsg
//     requests and principals and answer with decisions and Kafka codes;
//     connections, principals' derivation and dispatch stay in the broker.
//
// internal/bench is not held to the storage rule: it is a benchmark
// harness that runs the broker and kfake and drives them with kgo, a tool
// at the top of the import order that lives under internal/ only to stay
// out of the public API. The same holds for internal/console and
// internal/schemaregistry: the web console and the schema registry are
// Kafka clients of the broker they run in (the registry keeps its state in
// the _schemas topic through kgo), served by the root package.
//
// Inside the root package, files stand in layers (the map at the end of
// its doc.go: start.go on top, options.go and the shared parts at the
// bottom), and a file uses only names declared in files of its own layer
// or below: the HTTP sides know no Broker, the options no check. The test
// reads each file's syntax for the package-level names it does not
// declare itself, and fails on a use that points up and on a file that is
// in no layer.
//
// Why parse files rather than ask go list: go list evaluates build
// constraints for one GOOS, so an import in a file built only elsewhere
// (x_windows.go) would pass unseen, and it reports imports per package, not
// per file. Checking direct imports is enough because every way up is
// itself forbidden: a storage package can reach broker or kmsg only through
// a module package outside the storage set or through franz-go.
package lint
