package redisstore

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/core/ratelimit"
)

var _ ratelimit.Clearer = (*Store)(nil)

// clearBatch is how many keys one SCAN step asks for.
const clearBatch = 500

// Clear implements [ratelimit.Clearer]: it deletes the counter of every
// limiter key that starts with prefix (every counter of the store's
// Config.Prefix, for ""), found by SCAN with MATCH on every primary of a
// Cluster, and returns how many it deleted. It is for operators and
// development loops, not for requests: it walks the keyspace. A key stored
// hashed (longer than [MaxKeyLen] bytes, or beginning with "sha256:") is
// found only by the prefixes "" and "sha256:". Errors are wrapped with the
// prefix "redisstore: clear: ".
func (s *Store) Clear(ctx context.Context, prefix string) (int64, error) {
	if s.client == nil {
		return 0, fmt.Errorf("redisstore: clear: %w", errNilClient)
	}
	match := globEscape(s.prefix+prefix) + "*"
	var n int64
	var err error
	if cc, ok := s.client.(*redis.ClusterClient); ok {
		var total atomic.Int64 // ForEachMaster runs the nodes side by side
		err = cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			m, err := clearNode(ctx, node, match)
			total.Add(m)
			return err
		})
		n = total.Load()
	} else {
		n, err = clearNode(ctx, s.client, match)
	}
	reloadAfter(s.client, err)
	if err != nil {
		return n, fmt.Errorf("redisstore: clear: %w", err)
	}
	return n, nil
}

// clearNode deletes the keys of one node (or of a non-Cluster client) that
// match the glob match, one DEL per key (in a Cluster the keys of one DEL
// must share a slot), pipelined per SCAN step.
func clearNode(ctx context.Context, c redis.Cmdable, match string) (int64, error) {
	var n int64
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, match, clearBatch).Result()
		if err != nil {
			return n, err
		}
		if len(keys) > 0 {
			cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, k := range keys {
					p.Del(ctx, k)
				}
				return nil
			})
			if err != nil {
				return n, err
			}
			for _, cmd := range cmds {
				n += cmd.(*redis.IntCmd).Val()
			}
		}
		if cursor = next; cursor == 0 {
			return n, nil
		}
	}
}

// globEscape escapes the characters SCAN's MATCH pattern gives a meaning:
// *, ?, [, ] and \.
func globEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ { // bytes: a key need not be UTF-8
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
