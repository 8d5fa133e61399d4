package redisstore

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
)

// reloadCounter is a UniversalClient that counts ReloadState calls, as a
// *redis.ClusterClient would receive them.
type reloadCounter struct {
	redis.UniversalClient
	reloads int
}

func (r *reloadCounter) ReloadState(context.Context) { r.reloads++ }

// TestReloadAfter: a failed call makes a Cluster client reload its map of
// slots; success and redis.Nil (an answer: the key is missing) do not, and
// a client with no map (a single node's) is left alone.
func TestReloadAfter(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, 0},
		{"missing key", redis.Nil, 0},
		{"missing key, wrapped", fmt.Errorf("take: %w", redis.Nil), 0},
		{"dial error", errors.New("dial tcp 127.0.0.1:7000: connect: connection refused"), 1},
		{"CLUSTERDOWN", errors.New("CLUSTERDOWN The cluster is down"), 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &reloadCounter{}
			reloadAfter(c, tt.err)
			if c.reloads != tt.want {
				t.Errorf("reloadAfter(%v) reloaded %d times, want %d", tt.err, c.reloads, tt.want)
			}
		})
	}
	single := redis.NewClient(&redis.Options{})
	defer single.Close()
	reloadAfter(single, errors.New("down")) // no ReloadState: nothing to do, no panic
}
