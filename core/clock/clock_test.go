package clock_test

import (
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/clock"
)

func TestClock(t *testing.T) {
	at := time.Date(2031, time.March, 14, 15, 9, 26, 535_897_932, time.UTC)
	c := clock.New(at)
	if got := c.Now(); !got.Equal(at) {
		t.Fatalf("New(%v).Now() = %v", at, got)
	}
	c.Advance(90 * time.Second)
	if got, want := c.Now(), at.Add(90*time.Second); !got.Equal(want) {
		t.Errorf("after Advance(90s): %v, want %v", got, want)
	}
	c.Set(at)
	if got := c.Now(); !got.Equal(at) {
		t.Errorf("after Set: %v, want %v", got, at)
	}
}
