// Package poolown lets package sqlxopen hand the pool it opened to the
// sqlxstore.DB it returns, so that DB.Close closes the pool too, without a
// public API for it: a pool an app passes to New stays the app's.
package poolown

// Own marks db, a *sqlxstore.DB, as the owner of its pool. Package
// sqlxstore sets it when it is initialised.
var Own func(db any)
