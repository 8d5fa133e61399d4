// Package redisinfo counts what a Redis rate limiter costs: the commands
// and round trips a client sends (a go-redis hook, exact), and the commands
// the server executed (INFO deltas, shared with every other client of the
// server, so only meaningful over many attempts), plus a check that no key
// under a prefix was left without a TTL.
package redisinfo

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Counter is a go-redis hook that counts the commands a client sends and
// the round trips it makes (one per command, one per pipeline). Add it with
// client.AddHook before use.
//
// The handshake of a new connection (HELLO, AUTH, SELECT, CLIENT, PING,
// READONLY) is left out: it is paid once per pooled connection, not per
// attempt, and how many connections a parallel run opens is up to the
// pool.
type Counter struct {
	cmds, trips atomic.Int64
}

// handshake reports whether cmd belongs to a connection's set-up.
func handshake(cmd redis.Cmder) bool {
	switch cmd.Name() {
	case "hello", "auth", "select", "client", "ping", "readonly":
		return true
	}
	return false
}

var _ redis.Hook = (*Counter)(nil)

// DialHook implements redis.Hook.
func (c *Counter) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (c *Counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !handshake(cmd) {
			c.cmds.Add(1)
			c.trips.Add(1)
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (c *Counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		n := 0
		for _, cmd := range cmds {
			if !handshake(cmd) {
				n++
			}
		}
		if n > 0 {
			c.cmds.Add(int64(n))
			c.trips.Add(1)
		}
		return next(ctx, cmds)
	}
}

// Counts returns the commands and round trips counted so far.
func (c *Counter) Counts() (cmds, trips int64) { return c.cmds.Load(), c.trips.Load() }

// Stats is one reading of the server's counters.
type Stats struct {
	// Total is total_commands_processed: every command the server ran,
	// those called from scripts included.
	Total int64
	// Calls is the calls of each command (INFO commandstats), by lower-case
	// name ("evalsha", "hincrby", ...).
	Calls map[string]int64
	// Usec is the microseconds the server spent in each command, by the
	// same names. A script's time includes the commands it calls.
	Usec map[string]int64
}

// Read returns the server's counters, from one INFO call.
func Read(ctx context.Context, c redis.UniversalClient) (Stats, error) {
	text, err := c.Info(ctx, "stats", "commandstats").Result()
	if err != nil {
		return Stats{}, fmt.Errorf("redisinfo: INFO: %w", err)
	}
	return Parse(text)
}

// Parse reads the output of INFO stats commandstats.
func Parse(text string) (Stats, error) {
	s := Stats{Total: -1, Calls: map[string]int64{}, Usec: map[string]int64{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch {
		case name == "total_commands_processed":
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return Stats{}, fmt.Errorf("redisinfo: %s: %w", line, err)
			}
			s.Total = n
		case strings.HasPrefix(name, "cmdstat_"):
			calls, ok := field(value, "calls")
			usec, ok2 := field(value, "usec")
			if !ok || !ok2 {
				return Stats{}, fmt.Errorf("redisinfo: no calls or usec in %q", line)
			}
			s.Calls[strings.TrimPrefix(name, "cmdstat_")] = calls
			s.Usec[strings.TrimPrefix(name, "cmdstat_")] = usec
		}
	}
	if s.Total < 0 {
		return Stats{}, fmt.Errorf("redisinfo: no total_commands_processed in INFO")
	}
	return s, nil
}

// field returns the integer value of key in "k1=v1,k2=v2,...".
func field(s, key string) (int64, bool) {
	for kv := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k == key {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// Sub returns the counters of s minus those of before, less the one INFO
// call that read before (counted in s, not in before). Commands with no
// calls in the interval are left out.
func (s Stats) Sub(before Stats) Stats {
	d := Stats{Total: s.Total - before.Total - 1, Calls: map[string]int64{}, Usec: map[string]int64{}}
	for k, n := range s.Calls {
		if k == "info" {
			n--
		}
		if n -= before.Calls[k]; n != 0 {
			d.Calls[k] = n
			d.Usec[k] = s.Usec[k] - before.Usec[k]
		}
	}
	return d
}

// Scripts returns the script calls of d: EVAL, EVALSHA and their read-only
// forms, the top-level commands a Lua-based limiter sends.
func (d Stats) Scripts() int64 {
	return d.Calls["eval"] + d.Calls["evalsha"] + d.Calls["eval_ro"] + d.Calls["evalsha_ro"]
}

// ScriptUsec returns the server time spent in the script calls of d, in
// microseconds.
func (d Stats) ScriptUsec() int64 {
	return d.Usec["eval"] + d.Usec["evalsha"] + d.Usec["eval_ro"] + d.Usec["evalsha_ro"]
}

// KeysWithoutTTL scans the keys matching pattern and returns how many there
// are and how many have no expiry (PTTL -1).
func KeysWithoutTTL(ctx context.Context, c redis.UniversalClient, pattern string) (keys, noTTL int, err error) {
	iter := c.Scan(ctx, 0, pattern, 500).Iterator()
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		p := c.Pipeline()
		cmds := make([]*redis.DurationCmd, len(batch))
		for i, k := range batch {
			cmds[i] = p.PTTL(ctx, k)
		}
		if _, err := p.Exec(ctx); err != nil && err != redis.Nil {
			return fmt.Errorf("redisinfo: PTTL: %w", err)
		}
		for _, cmd := range cmds {
			// go-redis reports PTTL -1 (no expiry) as a duration of -1.
			if d := cmd.Val(); d == -1 {
				noTTL++
			}
		}
		keys += len(batch)
		batch = batch[:0]
		return nil
	}
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 500 {
			if err := flush(); err != nil {
				return keys, noTTL, err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return keys, noTTL, fmt.Errorf("redisinfo: SCAN %s: %w", pattern, err)
	}
	return keys, noTTL, flush()
}

// Unlink deletes every key matching pattern.
func Unlink(ctx context.Context, c redis.UniversalClient, pattern string) error {
	iter := c.Scan(ctx, 0, pattern, 500).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 500 {
			if err := c.Unlink(ctx, batch...).Err(); err != nil {
				return fmt.Errorf("redisinfo: UNLINK: %w", err)
			}
			batch = batch[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("redisinfo: SCAN %s: %w", pattern, err)
	}
	if len(batch) > 0 {
		if err := c.Unlink(ctx, batch...).Err(); err != nil {
			return fmt.Errorf("redisinfo: UNLINK: %w", err)
		}
	}
	return nil
}
