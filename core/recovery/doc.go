// Package recovery makes and checks two-factor recovery codes (the spec's
// "Recovery codes"): single-use codes that stand in for a TOTP code when the
// authenticator is lost.
//
//	h := recovery.NewHasher() // keep one; it is safe for concurrent use
//
//	// Enabling 2FA, or regenerating: show codes once, store hashes.
//	codes, hashes, err := recovery.Generate(ctx, h, 0) // 0: DefaultCount (8)
//
//	// Login with a code: persist remaining, so the code works only once.
//	valid, remaining, err := recovery.Verify(ctx, input, user.RecoveryCodeHashes, h)
//
// # Codes
//
// A code is 16 symbols in two groups, "xxxxxxxx-xxxxxxxx" (the spec's
// format), from [Alphabet], Crockford's base32 in lowercase:
// 0123456789abcdefghjkmnpqrstvwxyz. It leaves out i, l and o, which read as
// 1 and 0, and u. Each code is 10 bytes from crypto/rand written 5 bits per
// symbol, so it carries exactly 80 bits and every symbol is uniform: there
// is no modulo step to bias it. [Normalize] accepts what people type
// (upper case, no hyphen, spaces, o for 0, i or l for 1) and rejects
// everything else, including Unicode look-alikes, as [ErrMalformed].
//
// # Hashes and cost
//
// Codes are stored as bcrypt hashes (the spec says bcrypt-format), made by
// any [password.Hasher]. [NewHasher] returns bcrypt at the minimum cost, 4,
// on purpose. A work factor exists to slow the guessing of low-entropy
// secrets; these codes have 80 bits. An attacker holding the stored hashes
// must still search 2^80 codes, about 2^79 bcrypt runs per code on average:
// at a billion cost-4 hashes a second, far beyond any rig, that is some
// twenty million years. Cost 12 would add a factor of 256 to a search that
// is already hopeless, and would make every recovery attempt cost eight
// quarter-second hashes (Verify checks all stored hashes), a gift to anyone
// flooding the endpoint. Online guessing is bounded by the flows' rate
// limits. Passwords need the expensive hasher; recovery codes do not.
//
// # Verification
//
// [Verify] checks every stored hash, in parallel, with no early exit, so its
// duration does not reveal whether or which code matched. It returns the
// remaining hashes as a new slice; the caller stores them with a conditional
// write (only if the stored hashes are still the ones read), so that two
// concurrent requests cannot both spend the same code.
package recovery
