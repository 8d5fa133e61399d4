// Authkit is the command-line tool of the authkit library. It makes the
// secrets an authkit app is configured with.
//
// Usage:
//
//	authkit <command> [arguments]
//
// The commands are:
//
//	encryption-key  print a new key for ENCRYPTION_KEY
//	session-secret  print a new secret for SESSION_SECRET
//	help            print help about a command
//
// Run it from a checkout with
//
//	go run ./core/cmd/authkit encryption-key
//
// or install it with go install.
//
// # encryption-key
//
// Prints a new random key and a newline on stdout: "ak1_" followed by 32
// random bytes in unpadded base64url (see package secretbox). The key
// encrypts the TOTP secrets stored in the database:
//
//	export ENCRYPTION_KEY="$(authkit encryption-key)"
//
// ENCRYPTION_KEY may list several keys separated by commas: the first
// encrypts, all decrypt. To rotate, put a new key first and keep the old one
// until every stored value has been re-encrypted.
//
// # session-secret
//
// Prints a new random secret and a newline on stdout: 32 random bytes in
// unpadded base64url, for SESSION_SECRET, which signs session cookies and the
// tokens in mailed links:
//
//	export SESSION_SECRET="$(authkit session-secret)"
//
// # Exit status
//
// 0 on success (help included), 1 when the command failed, 2 on a usage
// error: no command, an unknown command, or an unexpected argument.
package main
