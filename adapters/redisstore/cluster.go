package redisstore

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// stateReloader is the method of a Cluster client (*redis.ClusterClient)
// that makes it fetch the cluster's map of slots again, in the background
// (coalesced: at most one reload at a time, 200 ms apart).
type stateReloader interface {
	ReloadState(ctx context.Context)
}

// reloadAfter tells a Cluster client to reload its map of slots after a
// call that failed with err. go-redis reloads the map by itself only on a
// MOVED or ASK reply and every ClusterOptions.ClusterStateReloadInterval
// (60 seconds by default): when a primary dies and its replica takes over,
// nothing answers MOVED, so without this every call on the dead primary's
// slots would fail until the next periodic reload. redis.Nil (a missing
// key) is an answer, not a failure; other clients than a Cluster's have no
// map to reload.
func reloadAfter(c redis.UniversalClient, err error) {
	if err == nil || errors.Is(err, redis.Nil) {
		return
	}
	if r, ok := c.(stateReloader); ok {
		r.ReloadState(context.Background())
	}
}
