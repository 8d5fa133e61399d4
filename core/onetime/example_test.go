package onetime_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/onetime"
)

// A value put by one request is taken by the next, once.
func Example() {
	ctx := context.Background()
	st := onetime.NewMemoryStore(onetime.MemoryConfig{})
	now := time.Now()
	if err := st.Put(ctx, "ceremony-key", []byte("challenge state"), now.Add(5*time.Minute)); err != nil {
		fmt.Println(err)
		return
	}
	data, err := st.Take(ctx, "ceremony-key", now)
	fmt.Printf("%s %v\n", data, err)
	_, err = st.Take(ctx, "ceremony-key", now)
	fmt.Println(errors.Is(err, onetime.ErrNotFound))
	// Output:
	// challenge state <nil>
	// true
}

// A value is not found once its expiry has come.
func ExampleStore_expiry() {
	ctx := context.Background()
	st := onetime.NewMemoryStore(onetime.MemoryConfig{})
	now := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	_ = st.Put(ctx, "k", []byte("v"), now.Add(time.Minute))
	_, err := st.Take(ctx, "k", now.Add(time.Minute))
	fmt.Println(err)
	// Output:
	// onetime: not found
}
