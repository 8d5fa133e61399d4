package recovery_test

import (
	"context"
	"fmt"
	"log"
	mrand "math/rand/v2"

	"github.com/authkit-go/authkit/core/recovery"
)

// seeded returns a deterministic reader so that the examples print the same
// codes every time. Production code calls Generate, which reads crypto/rand.
func seeded() *mrand.ChaCha8 {
	return mrand.NewChaCha8([32]byte{'a', 'u', 't', 'h', 'k', 'i', 't'})
}

func ExampleGenerate() {
	// In production: codes, hashes, err := recovery.Generate(ctx, h, 0)
	codes, hashes, err := recovery.GenerateWith(context.Background(), recovery.NewHasher(), 0, seeded())
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range codes {
		fmt.Println(c) // shown to the user once
	}
	fmt.Println(len(hashes), "hashes to store, each starting with", hashes[0][:7])
	// Output:
	// 74g4f4zy-d2sxwqzn
	// hh4h0tm9-ywbv22ky
	// h3cs1eem-tfn6fmvt
	// rbkcvc1m-w71dg6wj
	// ynhwh7t4-kqgpqrdk
	// 0fbdwt6z-5skkwhwv
	// w8jqpxzm-wsa5esgw
	// 8wf3x0wv-80anyyd1
	// 8 hashes to store, each starting with $2a$04$
}

func ExampleVerify() {
	ctx := context.Background()
	h := recovery.NewHasher()
	// The codes are those printed by the Generate example.
	_, stored, err := recovery.GenerateWith(ctx, h, 0, seeded())
	if err != nil {
		log.Fatal(err)
	}

	// The user types the third code, h3cs1eem-tfn6fmvt, in capitals, with a
	// space for the hyphen and an I for the 1.
	typed := "H3CSIEEM TFN6FMVT"
	valid, remaining, err := recovery.Verify(ctx, typed, stored, h)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(valid, len(remaining)) // store remaining in place of stored

	// The same code again, against what is now stored: spent.
	valid, remaining, err = recovery.Verify(ctx, typed, remaining, h)
	fmt.Println(valid, len(remaining), err)
	// Output:
	// true 7
	// false 7 <nil>
}

func ExampleNormalize() {
	for _, in := range []string{"7K3M9QXD-2HTV8RPW", " 7k3m9qxd 2htv8rpw ", "7K3M9QXD2HTV8RPW", "7k3m9qxd-2htv8rpu"} {
		code, err := recovery.Normalize(in)
		fmt.Printf("%q %v\n", code, err)
	}
	// Output:
	// "7k3m9qxd-2htv8rpw" <nil>
	// "7k3m9qxd-2htv8rpw" <nil>
	// "7k3m9qxd-2htv8rpw" <nil>
	// "" recovery: malformed code: character not in the alphabet
}
