//go:build kfake

package compat_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

func startBroker(t *testing.T) []string {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}
