package passkeys

import (
	"container/list"
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/authkit-go/authkit/core/onetime"
)

// ChallengeStore keeps the state of the ceremonies between begin and
// finish: the challenge, what it is bound to, and what it is for, under
// the hash of the key in the browser's challenge cookie (256 random
// bits), until Config.ChallengeLifetime has passed. It is core's
// onetime.Store, whose Take is atomic: of two racing finishes of one
// ceremony at most one gets its state.
//
// The default is per process: a ceremony begun on one instance is not
// found on another. Apps with several instances give Config.Challenges a
// store they share: redisstore.NewOneTime (Redis) or sqlxstore's
// DB.OneTime (the challenges table of migration 0004), or route each
// browser to one instance.
type ChallengeStore = onetime.Store

// ErrChallengeNotFound is what ChallengeStore.Take returns for a key it
// does not hold, or holds no longer (taken, or expired): onetime's
// ErrNotFound.
var ErrChallengeNotFound = onetime.ErrNotFound

// DefaultChallengeCapacity is how many anonymous ceremonies (passwordless
// sign-in begins) the default challenge store holds, and how many
// ceremonies of known users besides, unless Config.ChallengeCapacity
// says otherwise.
const DefaultChallengeCapacity = 100000

// challengesPerUser is how many live ceremonies of one user (registration
// and 2FA begins) the default store holds: a few tabs' worth. A user's
// next one drops their oldest.
const challengesPerUser = 8

// poolReportInterval is the least time between two log lines of the
// default store about the ceremonies it dropped while full.
const poolReportInterval = time.Minute

// challengePool is Config.Challenges' default: an in-process store whose
// capacity anonymous begins cannot take from anyone else. See the package
// documentation, "The default challenge store", for why it is built so.
//
// Ceremonies are kept in two partitions, each a queue in the order they
// were begun (with one lifetime for all, also the order they expire in):
// anonymous ones (passwordless sign-in, bound to nobody) and those of a
// known user (registration, the 2FA step), at most challengesPerUser per
// user. A begin that finds its partition, or its user's share, full drops
// the oldest ceremony there; nothing ever refuses a begin. Expired
// ceremonies are dropped from the head of the queues as new ones come.
type challengePool struct {
	mu       sync.Mutex
	now      func() time.Time
	log      *slog.Logger
	anonCap  int
	boundCap int
	perUser  int // challengesPerUser
	entries  map[string]*poolEntry
	anon     list.List // of *poolEntry, oldest first
	bound    list.List // of *poolEntry, oldest first
	owners   map[string]*list.List

	dropped    [2]int    // live ceremonies dropped since the last report: anonymous, bound
	reportedAt time.Time // of the last report
}

type poolEntry struct {
	key     string
	owner   string // "" for an anonymous ceremony
	data    []byte
	expires time.Time
	inPart  *list.Element // in anon or bound
	inOwner *list.Element // in owners[owner]; nil when anonymous
}

func newChallengePool(capacity int, now func() time.Time, log *slog.Logger) *challengePool {
	if capacity <= 0 {
		capacity = DefaultChallengeCapacity
	}
	if now == nil {
		now = time.Now
	}
	return &challengePool{now: now, log: log, anonCap: capacity, boundCap: capacity, perUser: challengesPerUser,
		entries: map[string]*poolEntry{}, owners: map[string]*list.List{}}
}

var _ ChallengeStore = (*challengePool)(nil)

// Put implements ChallengeStore for anonymous ceremonies.
func (p *challengePool) Put(ctx context.Context, key string, data []byte, expires time.Time) error {
	return p.put(ctx, key, "", data, expires)
}

// Take implements ChallengeStore, for both partitions.
func (p *challengePool) Take(ctx context.Context, key string, now time.Time) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	e, ok := p.entries[key]
	if ok {
		p.remove(e)
	}
	p.mu.Unlock()
	if !ok || !e.expires.After(now) {
		return nil, ErrChallengeNotFound
	}
	return e.data, nil // a copy made by put, no longer in the pool
}

// owned is the pool as a ChallengeStore whose Put keeps ceremonies of the
// user owner.
func (p *challengePool) owned(owner string) ChallengeStore { return ownedPool{p, owner} }

type ownedPool struct {
	p     *challengePool
	owner string
}

func (o ownedPool) Put(ctx context.Context, key string, data []byte, expires time.Time) error {
	return o.p.put(ctx, key, o.owner, data, expires)
}

func (o ownedPool) Take(ctx context.Context, key string, now time.Time) ([]byte, error) {
	return o.p.Take(ctx, key, now)
}

// put stores a ceremony of owner ("" anonymous), dropping what it must to
// make room: the expired ceremonies at the head of the partition, then the
// owner's oldest when they hold challengesPerUser, then the partition's
// oldest when it is full.
func (p *challengePool) put(ctx context.Context, key, owner string, data []byte, expires time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e := &poolEntry{key: key, owner: owner, data: append(make([]byte, 0, len(data)), data...), expires: expires}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if old, ok := p.entries[key]; ok {
		p.remove(old)
	}
	part, capacity, kind := &p.anon, p.anonCap, 0
	if owner != "" {
		part, capacity, kind = &p.bound, p.boundCap, 1
	}
	for f := part.Front(); f != nil && !f.Value.(*poolEntry).expires.After(now); f = part.Front() {
		p.remove(f.Value.(*poolEntry))
	}
	if owner != "" {
		if ol := p.owners[owner]; ol != nil && ol.Len() >= p.perUser {
			p.drop(ol.Front().Value.(*poolEntry), now, -1) // the user's own: not a sign of a flood
		}
	}
	if part.Len() >= capacity {
		p.drop(part.Front().Value.(*poolEntry), now, kind)
	}
	e.inPart = part.PushBack(e)
	if owner != "" {
		ol := p.owners[owner]
		if ol == nil {
			ol = list.New()
			p.owners[owner] = ol
		}
		e.inOwner = ol.PushBack(e)
	}
	p.entries[key] = e
	p.report(now)
	return nil
}

// drop removes a live ceremony to make room; kind (0 anonymous, 1 bound,
// -1 not counted) counts it for the next report.
func (p *challengePool) drop(e *poolEntry, now time.Time, kind int) {
	if kind >= 0 && e.expires.After(now) {
		p.dropped[kind]++
	}
	p.remove(e)
}

// report logs the ceremonies dropped because a partition was full, at most
// once per poolReportInterval, however many: a flood makes one line a
// minute, not one per request.
func (p *challengePool) report(now time.Time) {
	if p.dropped == [2]int{} || (!p.reportedAt.IsZero() && now.Sub(p.reportedAt) < poolReportInterval) {
		return
	}
	p.log.Warn("passkeys: challenge store full: the oldest ceremonies were dropped to make room",
		"anonymous", p.dropped[0], "signed_in", p.dropped[1], "capacity", p.anonCap)
	p.dropped, p.reportedAt = [2]int{}, now
}

func (p *challengePool) remove(e *poolEntry) {
	delete(p.entries, e.key)
	if e.owner == "" {
		p.anon.Remove(e.inPart)
		return
	}
	p.bound.Remove(e.inPart)
	if ol := p.owners[e.owner]; ol != nil {
		ol.Remove(e.inOwner)
		if ol.Len() == 0 {
			delete(p.owners, e.owner)
		}
	}
}

// len reports how many ceremonies the pool holds: anonymous, and of users.
func (p *challengePool) len() (anonymous, bound int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.anon.Len(), p.bound.Len()
}
