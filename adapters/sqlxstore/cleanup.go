package sqlxstore

import (
	"context"
	"sync"
)

// cleaner runs one store's Cleanup in the background every
// Config.CleanupInterval, until close: the rate-limit store's and the
// one-time store's, each started by the first call that asks for its
// store.
type cleaner struct {
	stop context.CancelFunc // nil when no loop runs
	done chan struct{}      // closed when the loop returns
	once sync.Once
}

// startCleaner starts the loop that calls cleanup on every tick, logging
// its failures as "authkit: <what> cleanup failed". With a negative
// interval it starts nothing.
func (db *DB) startCleaner(what string, cleanup func(context.Context) (int64, error)) *cleaner {
	c := &cleaner{}
	if db.cleanup <= 0 {
		return c
	}
	ctx, stop := context.WithCancel(context.Background())
	c.stop, c.done = stop, make(chan struct{})
	tick, stopTicker := db.newTicker(db.cleanup)
	go func() {
		defer close(c.done)
		defer stopTicker()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick:
				cctx, cancel := context.WithTimeout(ctx, db.cleanup)
				if _, err := cleanup(cctx); err != nil && ctx.Err() == nil {
					db.log.Warn("authkit: "+what+" cleanup failed", "err", err)
				}
				cancel()
			}
		}
	}()
	return c
}

// close stops the loop, cancelling a cleanup in progress, and waits for
// it to return. It is idempotent.
func (c *cleaner) close() {
	c.once.Do(func() {
		if c.stop != nil {
			c.stop()
			<-c.done
		}
	})
}

// deleteExpired runs sweep, a DELETE of the rows whose time ended before
// its one argument, with now (Config.Now) in Unix milliseconds, retried
// like any statement, and returns how many rows it deleted: the Cleanup of
// the rate-limit store and of the one-time store.
func (db *DB) deleteExpired(ctx context.Context, sweep string) (int64, error) {
	var n int64
	err := db.retry(ctx, func() error {
		res, err := db.x.ExecContext(ctx, sweep, db.now().UnixMilli())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
