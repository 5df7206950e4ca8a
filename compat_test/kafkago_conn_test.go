package compat_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// kafka-go's own TestConn delete-topics cases (conn_test.go), rewritten
// against minikafka with TestConn's set-up (a connection from DialLeader
// to a fresh, auto-created topic): after DeleteTopics, Conn.ReadPartitions
// asks Metadata for the deleted topics, which auto-creates them again;
// Kafka answers that request LEADER_NOT_AVAILABLE with no partitions,
// kafka-go ignores errors of topics other than the connection's, and the
// test expects no partitions. A broker that answers the creating request
// with the new partitions fails both cases.
func TestKafkaGoConnDeleteTopics(t *testing.T) {
	addrs := startBroker(t)
	n := 0
	topic := func() string { n++; return fmt.Sprintf("kafkago-conn-%d-%d", time.Now().UnixNano(), n) }
	// As TestConn: DialLeader looks the partition up, which auto-creates
	// the topic, and retries past LEADER_NOT_AVAILABLE.
	dial := func(t *testing.T) *kafka.Conn {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := (&kafka.Dialer{Resolver: &net.Resolver{}}).DialLeader(ctx, "tcp", addrs[0], topic(), 0)
		if err != nil {
			t.Fatal("failed to open a new kafka connection:", err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}

	t.Run("delete-topics", func(t *testing.T) {
		conn := dial(t)
		t1, t2 := topic(), topic()
		if err := conn.CreateTopics(kafka.TopicConfig{Topic: t1, NumPartitions: 1, ReplicationFactor: 1},
			kafka.TopicConfig{Topic: t2, NumPartitions: 1, ReplicationFactor: 1}); err != nil {
			t.Fatalf("CreateTopics: %v", err)
		}
		if err := conn.DeleteTopics(t1, t2); err != nil {
			t.Fatalf("DeleteTopics: %v", err)
		}
		partitions, err := conn.ReadPartitions(t1, t2)
		if err != nil {
			t.Fatalf("ReadPartitions: %v", err)
		}
		if len(partitions) != 0 {
			t.Fatalf("partitions of deleted topics: %+v, want none", partitions)
		}
	})

	t.Run("delete-topics-invalid-topic", func(t *testing.T) {
		conn := dial(t)
		t1 := topic()
		if err := conn.CreateTopics(kafka.TopicConfig{Topic: t1, NumPartitions: 1, ReplicationFactor: 1}); err != nil {
			t.Fatalf("CreateTopics: %v", err)
		}
		if err := conn.DeleteTopics("invalid-topic", t1); !errors.Is(err, kafka.UnknownTopicOrPartition) {
			t.Fatalf("DeleteTopics: %v, want UnknownTopicOrPartition", err)
		}
		partitions, err := conn.ReadPartitions(t1)
		if err != nil {
			t.Fatalf("ReadPartitions: %v", err)
		}
		if len(partitions) != 0 {
			t.Fatalf("partitions: %+v, want none", partitions)
		}
	})

	// A connection of no topic reports the creating request's error, and
	// the topic is there on the next request.
	t.Run("next-request-sees-it", func(t *testing.T) {
		conn, err := kafka.Dial("tcp", addrs[0])
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		name := topic()
		first, err := conn.ReadPartitions(name)
		if !errors.Is(err, kafka.LeaderNotAvailable) || len(first) != 0 {
			t.Fatalf("creating request: %+v %v, want LEADER_NOT_AVAILABLE", first, err)
		}
		next, err := conn.ReadPartitions(name)
		if err != nil || len(next) != 1 {
			t.Fatalf("next request: %+v %v", next, err)
		}
	})
}
