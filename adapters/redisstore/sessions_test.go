package redisstore

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/store/storetest"
	"github.com/authkit-go/authkit/core/user"
)

// TestSessionsMiniredis runs the session-record suite on miniredis.
func TestSessionsMiniredis(t *testing.T) {
	storetest.RunSessionStore(t, func(t *testing.T) *Sessions {
		_, c := newMiniredis(t)
		return NewSessions(c, SessionsConfig{})
	})
}

// TestSessionsRedis runs the session-record suite on the real Redis of
// AUTHKIT_TEST_REDIS, each subtest under a prefix of its own.
func TestSessionsRedis(t *testing.T) {
	opts := realRedisOptions(t)
	storetest.RunSessionStore(t, func(t *testing.T) *Sessions {
		c := newClient(t, opts)
		prefix := randomPrefix()
		cleanupPrefix(t, c, prefix)
		return NewSessions(c, SessionsConfig{Prefix: prefix})
	})
}

// TestSessionsTTL: a record expires at its ExpiresAt, Touch moves that,
// and the user's index lives as long as its longest record.
func TestSessionsTTL(t *testing.T) {
	mr, c := newMiniredis(t)
	s := NewSessions(c, SessionsConfig{Prefix: "p:"})
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s.now = func() time.Time { return now }
	ctx := t.Context()
	r := session.Record{ID: strings.Repeat("a", 32), UserID: "u1", CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	short := r
	short.ID, short.ExpiresAt = strings.Repeat("b", 32), now.Add(time.Minute)
	if err := s.Create(ctx, short); err != nil {
		t.Fatal(err)
	}
	idx := s.indexKey("u1")
	if got := mr.TTL("p:{s}r:" + r.ID); got != time.Hour {
		t.Errorf("record TTL %v, want 1h", got)
	}
	if got := mr.TTL(idx); got != time.Hour {
		t.Errorf("index TTL %v, want 1h (its longest record's, not the later shorter one's)", got)
	}
	if err := s.Touch(ctx, r.ID, now, now.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, got2 := mr.TTL("p:{s}r:"+r.ID), mr.TTL(idx); got != 2*time.Hour || got2 != 2*time.Hour {
		t.Errorf("after Touch: record TTL %v, index TTL %v; want 2h, 2h", got, got2)
	}
	mr.FastForward(time.Hour)
	list, err := s.List(ctx, "u1")
	if err != nil || len(list) != 1 || list[0].ID != r.ID {
		t.Fatalf("List after the short record expired = %+v, %v; want only %s", list, err, r.ID)
	}
	if ok, _ := mr.SIsMember(idx, short.ID); ok {
		t.Errorf("the expired record's id stays in the index after List")
	}
	mr.FastForward(time.Hour)
	if _, err := s.Get(ctx, r.ID); !errors.Is(err, user.ErrNotFound) {
		t.Errorf("Get after ExpiresAt = %v, want user.ErrNotFound", err)
	}
	if mr.Exists(idx) {
		t.Errorf("the index outlived every record")
	}
}

// TestSessionsKeyLayout: a prefix with a Cluster hash tag is used as it
// is; any other is followed by SessionsHashTag, so that a record and its
// user's index share a slot (TestCluster/SessionKeysShareASlot checks the
// slots on a real Cluster).
func TestSessionsKeyLayout(t *testing.T) {
	for _, tt := range []struct{ prefix, record string }{
		{"", "authkit:sess:{s}r:id"},
		{"app:sess:", "app:sess:{s}r:id"},
		{"{app-sess}:", "{app-sess}:r:id"},
		{"a{b}c:", "a{b}c:r:id"},
		{"a{", "a{{s}r:id"},     // no "}" after the "{": Redis's tag is "{s"
		{"a}{b", "a}{b{s}r:id"}, // tag "b{s"
		{"{}x:", "{}x:{s}r:id"}, // an empty first tag: hashed whole on a Cluster
	} {
		s := NewSessions(nil, SessionsConfig{Prefix: tt.prefix})
		if got := s.recordKey("id"); got != tt.record {
			t.Errorf("prefix %q: record key %q, want %q", tt.prefix, got, tt.record)
		}
		if got, want := s.indexKey("u"), strings.TrimSuffix(tt.record, "r:id")+"u:"+hexSHA256("u"); got != want {
			t.Errorf("prefix %q: index key %q, want %q", tt.prefix, got, want)
		}
	}
}
