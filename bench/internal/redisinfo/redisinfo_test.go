package redisinfo

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

const infoBefore = `# Stats
total_connections_received:12
total_commands_processed:1000
instantaneous_ops_per_sec:3

# Commandstats
cmdstat_evalsha:calls=100,usec=500,usec_per_call=5.00,rejected_calls=0,failed_calls=0
cmdstat_info:calls=7,usec=70,usec_per_call=10.00,rejected_calls=0,failed_calls=0
cmdstat_hget:calls=100,usec=60,usec_per_call=0.60,rejected_calls=0,failed_calls=0
`

const infoAfter = `# Stats
total_commands_processed:1301

# Commandstats
cmdstat_evalsha:calls=200,usec=1100,usec_per_call=5.50,rejected_calls=0,failed_calls=0
cmdstat_info:calls=8,usec=80,usec_per_call=10.00,rejected_calls=0,failed_calls=0
cmdstat_hget:calls=200,usec=130,usec_per_call=0.65,rejected_calls=0,failed_calls=0
cmdstat_eval:calls=1,usec=40,usec_per_call=40.00,rejected_calls=0,failed_calls=0
`

func TestParseAndSub(t *testing.T) {
	before, err := Parse(infoBefore)
	if err != nil {
		t.Fatal(err)
	}
	if before.Total != 1000 || before.Calls["evalsha"] != 100 || before.Usec["hget"] != 60 {
		t.Fatalf("Parse = %+v", before)
	}
	after, err := Parse(infoAfter)
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	// 301 commands, less the INFO that read before.
	if d.Total != 300 {
		t.Errorf("Total = %d, want 300", d.Total)
	}
	if d.Calls["evalsha"] != 100 || d.Calls["hget"] != 100 || d.Calls["eval"] != 1 {
		t.Errorf("Calls = %v", d.Calls)
	}
	if _, ok := d.Calls["info"]; ok {
		t.Errorf("the INFO call that read before is counted: %v", d.Calls)
	}
	if d.Scripts() != 101 || d.ScriptUsec() != 640 {
		t.Errorf("Scripts() = %d, ScriptUsec() = %d, want 101 and 640", d.Scripts(), d.ScriptUsec())
	}
}

func TestParseRejects(t *testing.T) {
	for _, text := range []string{
		"# Stats\ninstantaneous_ops_per_sec:1\n",
		"total_commands_processed:x\n",
		"total_commands_processed:1\ncmdstat_get:usec=1\n",
	} {
		if _, err := Parse(text); err == nil {
			t.Errorf("Parse(%q) accepted it", text)
		}
	}
}

func newMini(t *testing.T) (*miniredis.Miniredis, *redis.Client, *Counter) {
	t.Helper()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), Protocol: 2})
	t.Cleanup(func() { _ = c.Close() })
	var counter Counter
	c.AddHook(&counter)
	return m, c, &counter
}

func TestCounter(t *testing.T) {
	_, c, counter := newMini(t)
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil { // handshake: not counted
		t.Fatal(err)
	}
	if err := c.Set(ctx, "a", 1, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "a")
		p.Incr(ctx, "a")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if cmds, trips := counter.Counts(); cmds != 3 || trips != 2 {
		t.Errorf("Counts() = %d commands, %d round trips; want 3 and 2", cmds, trips)
	}
}

func TestKeysWithoutTTLAndUnlink(t *testing.T) {
	m, c, _ := newMini(t)
	ctx := context.Background()
	for _, k := range []string{"p:a", "p:b", "p:c"} {
		if err := m.Set(k, "1"); err != nil {
			t.Fatal(err)
		}
	}
	m.SetTTL("p:a", time.Minute)
	if err := m.Set("q:other", "1"); err != nil {
		t.Fatal(err)
	}
	keys, noTTL, err := KeysWithoutTTL(ctx, c, "p:*")
	if err != nil || keys != 3 || noTTL != 2 {
		t.Fatalf("KeysWithoutTTL = %d, %d, %v; want 3, 2", keys, noTTL, err)
	}
	if err := Unlink(ctx, c, "p:*"); err != nil {
		t.Fatal(err)
	}
	if got := m.Keys(); len(got) != 1 || got[0] != "q:other" {
		t.Errorf("after Unlink the keys are %v, want only q:other", got)
	}
}
