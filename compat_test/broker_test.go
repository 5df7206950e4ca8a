package compat_test

import (
	"testing"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// startBroker gives a client its own minikafka: random port, temp dir,
// auto-creation on (kcat's way to make a topic), one partition by default.
func startBroker(t *testing.T) []string {
	b := minikafkatest.New(t, minikafka.WithAutoCreateTopics(true), minikafka.WithDefaultPartitions(1))
	return b.Addrs()
}
