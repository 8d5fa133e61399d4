package secretbox_test

import (
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/authkit-go/authkit/core/secretbox"
)

// The spec's shape: encrypt and decrypt with the text of ENCRYPTION_KEY.
func ExampleEncrypt() {
	key, err := secretbox.GenerateKey() // what `authkit encryption-key` prints
	if err != nil {
		log.Fatal(err)
	}

	ciphertext, err := secretbox.Encrypt("JBSWY3DPEHPK3PXP", key)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.HasPrefix(ciphertext, "v1."), len(ciphertext))

	plaintext, err := secretbox.Decrypt(ciphertext, key)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(plaintext)
	// Output:
	// true 87
	// JBSWY3DPEHPK3PXP
}

// Rotating keys: the new key goes first in ENCRYPTION_KEY, the old one stays
// after it until every stored value has been re-encrypted.
func ExampleKeyring() {
	oldKey, err := secretbox.GenerateKey()
	if err != nil {
		log.Fatal(err)
	}
	newKey, err := secretbox.GenerateKey()
	if err != nil {
		log.Fatal(err)
	}

	// Before the rotation: ENCRYPTION_KEY=<old>.
	before, err := secretbox.ParseKeyring(oldKey)
	if err != nil {
		log.Fatal(err)
	}
	stored, err := before.EncryptString("JBSWY3DPEHPK3PXP", "totp:user-1")
	if err != nil {
		log.Fatal(err)
	}

	// During the rotation: ENCRYPTION_KEY=<new>,<old>. Old values still
	// decrypt; re-encrypting one puts it under the new key.
	ring, err := secretbox.ParseKeyring(newKey + "," + oldKey)
	if err != nil {
		log.Fatal(err)
	}
	secret, err := ring.DecryptString(stored, "totp:user-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("old value:", secret)
	restored, err := ring.EncryptString(secret, "totp:user-1")
	if err != nil {
		log.Fatal(err)
	}

	// After the rotation: ENCRYPTION_KEY=<new>.
	after, err := secretbox.ParseKeyring(newKey)
	if err != nil {
		log.Fatal(err)
	}
	secret, err = after.DecryptString(restored, "totp:user-1")
	fmt.Println("re-encrypted value:", secret, err)
	_, err = after.DecryptString(stored, "totp:user-1")
	fmt.Println("value left under the old key:", errors.Is(err, secretbox.ErrUnknownKey))

	// The associated data binds the value to its row.
	_, err = after.DecryptString(restored, "totp:user-2")
	fmt.Println("moved to another row:", errors.Is(err, secretbox.ErrDecrypt))
	// Output:
	// old value: JBSWY3DPEHPK3PXP
	// re-encrypted value: JBSWY3DPEHPK3PXP <nil>
	// value left under the old key: true
	// moved to another row: true
}

// A bad key fails at startup with its position, never its text.
func ExampleParseKeyring() {
	_, err := secretbox.ParseKeyring("ak1_tooShort, ")
	fmt.Println(err)
	fmt.Println(errors.Is(err, secretbox.ErrInvalidKey))
	// Output:
	// secretbox: invalid key: key 1 of 2: has 8 characters after "ak1_", want 43
	// true
}
