// Package password hashes and verifies passwords: the spec's hash object
// (createHash with make and verify).
//
// [Hasher] and [Rehasher] are the interfaces the flows use; [Standard],
// made by [New], implements both. Its zero Config hashes with bcrypt at cost
// 12:
//
//	h, err := password.New(password.Config{})
//	if err != nil { ... }
//	hash, err := h.Hash(ctx, pw)           // at registration, after Policy.Check
//	ok, err := h.Verify(ctx, pw, hash)     // at login
//	if ok && h.NeedsRehash(hash) { ... }   // store h.Hash(ctx, pw) instead
//
// Tests in other packages use [ForTesting], a cost-4 hasher that must never
// hash real passwords.
//
// # Unicode
//
// Passwords are NFKC-normalised ([Normalize]) before hashing and before
// verifying, so "ﬁ" and "fi", or "é" typed composed and decomposed, are the
// same password. [Policy] counts characters (code points) of the normal
// form: Default 8 to 128. A hash imported from a system that did not
// normalise still verifies for any password already in NFKC form, which
// includes all ASCII; a password typed with compatibility characters (for
// example fullwidth letters) needs a reset after such an import.
//
// # Formats
//
// Verify recognises these formats and nothing else (an error wrapping
// [ErrUnknownFormat]):
//
//   - Plain bcrypt, $2a$NN$ followed by 53 characters of bcrypt's base64:
//     what Hash writes for a password whose normal form is at most 72
//     bytes. $2b$ and $2y$ hashes from other libraries (OpenBSD, PHP,
//     Python, Node) are the same algorithm and verify as they are.
//   - Long-password bcrypt, "$authkit-bcrypt-sha256$v=1" followed by a
//     complete plain bcrypt hash, for example
//     $authkit-bcrypt-sha256$v=1$2a$12$<53 characters>. bcrypt reads only
//     72 bytes, so for a longer password Hash computes
//     HMAC-SHA256(key "authkit-bcrypt-sha256-v1", password), encodes the 32
//     bytes in padded standard base64 (44 bytes, never a NUL) and bcrypts
//     that. Passwords are never truncated: two passwords that differ only
//     after byte 72 are different passwords. The key is a fixed, public
//     label, not a secret; the HMAC only makes the pre-hash specific to
//     authkit, so that a hash of the same password leaked from another site
//     (an unsalted SHA-256, say) cannot be fed to bcrypt in its place
//     ("password shucking").
//   - argon2id in the PHC string format of the reference implementation,
//     $argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<key>, salt and key
//     in unpadded standard base64.
//
// A password longer than 72 bytes never matches a plain bcrypt hash (bcrypt
// would look only at its first 72 bytes); Verify answers false after
// spending one bcrypt comparison at the hash's cost, so that the time of an
// answer never depends on the password's length.
//
// # Bounds on stored hashes
//
// A hash is parsed and bounds-checked completely before any work: a
// malformed or out-of-bounds hash is an error wrapping [ErrMalformedHash],
// never a panic or a huge allocation. Accepted: bcrypt cost 4 to 18;
// argon2id memory 8×p to 262144 KiB (256 MiB), 1 to 32 passes, 1 to 64
// lanes, salt 8 to 64 bytes, key 16 to 64 bytes, version 19 only. [New]
// enforces the same bounds, so it never makes a hash it would refuse.
//
// # Cost and load
//
// bcrypt cost 12 takes about a quarter of a second of one core; argon2id's
// default (m=19456 KiB, t=2, p=1) is OWASP's recommendation. New refuses a
// bcrypt cost below 10, or argon2id parameters below OWASP's weakest
// recommendation, unless Config.AllowLowCost is set, which is for tests and
// for hashers of high-entropy secrets such as recovery codes. Each Standard
// computes at most Config.MaxConcurrent hashes at once (Default:
// GOMAXPROCS); further calls wait for a slot or for their context, so a
// login flood queues instead of exhausting CPU and memory.
//
// NeedsRehash reports hashes made with another algorithm, cost or argon2id
// parameters, and answers true for anything it cannot parse.
//
// # Breached and common passwords
//
// A [Checker] tells whether a new password is known to attackers (ASVS
// 2.1.7): [Pwned] asks the Have I Been Pwned range API with k-anonymity
// (only the first five hex characters of the SHA-1 leave the process,
// answers padded), [List] holds common passwords the app supplies, and
// [AnyOf] combines them. core/auth consults one on registration, reset and
// change (auth.Config.PasswordChecker):
//
//	pwned, err := password.NewPwned(password.PwnedConfig{})
//	common, err := password.ReadList(file) // one password a line
//	cfg.PasswordChecker = password.AnyOf(common, pwned)
package password
