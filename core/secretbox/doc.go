// Package secretbox encrypts small secrets at rest, such as the TOTP secrets
// that authkit keeps in a text column of the user table (the spec's
// encrypt / decrypt).
//
// Parse the keys once at startup and use the [Keyring]:
//
//	ring, err := secretbox.ParseKeyring(os.Getenv("ENCRYPTION_KEY"))
//	if err != nil {
//		log.Fatal(err) // names the bad key's position, never its text
//	}
//	ct, err := ring.EncryptString(totpSecret, "totp:"+user.ID)
//	...
//	secret, err := ring.DecryptString(ct, "totp:"+user.ID)
//
// The package-level [Encrypt] and [Decrypt] keep the spec's shape
// (plaintext, key) for convenience; they parse the key text on every call
// and take no associated data.
//
// # Cipher
//
// XChaCha20-Poly1305 (golang.org/x/crypto/chacha20poly1305) with a random
// 24-byte nonce from crypto/rand for every encryption. Random 192-bit nonces
// never collide in practice, so a key needs no message counter and no
// coordination between processes. AES-256-GCM was the alternative: its
// 96-bit random nonces cap a key at about 2^32 encryptions, it is
// constant-time only where the CPU has AES instructions, and its one
// advantage, FIPS 140 approval, does not matter to authkit's users. (Under
// GODEBUG=fips140=only, [NewKeyring] returns an error.)
//
// # Keys
//
// A key is [KeySize] (32) random bytes. Its text form is [KeyPrefix] ("ak1_")
// followed by the bytes in unpadded base64url, 47 characters in all:
//
//	ak1_<43 characters of A-Z a-z 0-9 - _>
//
// `authkit encryption-key` (or [GenerateKey]) makes one. [ParseKeyring]
// requires the prefix, the exact length and canonical base64url, so a
// truncated, mistyped or wrong value fails at startup instead of encrypting
// under a key nobody can reproduce.
//
// ENCRYPTION_KEY may hold several keys separated by commas (spaces around
// each are trimmed). The first key encrypts; all of them decrypt. To rotate:
// generate a new key, set ENCRYPTION_KEY=new,old, re-encrypt the stored
// values when convenient (decrypt, encrypt, save), then drop the old key.
// Decrypt fails with [ErrUnknownKey] for a value whose key was dropped too
// early.
//
// # Ciphertext format, version 1
//
// A ciphertext is ASCII text made of three fields separated by '.':
//
//	v1.<key id>.<body>
//
//	v1      the format version.
//	key id  8 lowercase hex characters: the first 4 bytes of
//	        SHA-256("authkit secretbox key id v1" || 0x00 || key).
//	        It names the key without revealing anything about it, so
//	        Decrypt picks the key without trying each one.
//	body    unpadded base64url (RFC 4648 section 5, canonical: unused
//	        trailing bits are zero) of nonce || ciphertext || tag:
//	        24 bytes of nonce, then the XChaCha20-Poly1305 output, which is
//	        as long as the plaintext plus a 16-byte tag.
//
// The AEAD's additional data is the 12-byte header "v1.<key id>." followed by
// the caller's associated data. The header has a fixed length, so the
// concatenation is unambiguous; it binds the version and the key id, so
// changing either makes the value fail to decrypt.
//
// The text uses only A-Z a-z 0-9 '-' '_' '.', so it is safe in a text column,
// a URL, a cookie or JSON without escaping. Its length is
// 12 + ceil((40+n)*4/3) for an n-byte plaintext: 108 characters for a 32-byte
// TOTP secret.
//
// A later version will start with a different tag ("v2.") and Decrypt will
// choose the parsing by that tag; version 1 values will keep decrypting.
//
// # Errors
//
// Every Decrypt failure satisfies errors.Is(err, [ErrDecrypt]). [ErrMalformed]
// (not a ciphertext at all) and [ErrUnknownKey] (no key of the ring has the
// ciphertext's key id) wrap it and narrow it down; an error that is neither
// means the authentication check failed: tampered or truncated data, or the
// wrong associated data.
//
// # Printing
//
// A [Keyring] prints only its key ids, with every fmt verb and in log/slog,
// so logging the configuration cannot leak a key.
package secretbox
