package storetest

import (
	"time"

	"github.com/authkit-go/authkit/core/clock"
)

// Clock is a settable clock for stores that take their time from a Now
// function. It is safe for concurrent use. It is core/clock's, the clock of
// the flow suite (core/authtest) too.
type Clock = clock.Clock

// NewClock returns a clock stopped at t.
func NewClock(t time.Time) *Clock { return clock.New(t) }
