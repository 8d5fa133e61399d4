// Package sqlxopen opens a [sqlxstore.DB] from a database URL
// (postgres://, mysql://, sqlite://): it parses the URL, builds the
// driver's DSN with the settings the stores rely on, sizes the pool and
// checks that the server answers.
//
// It links all three drivers the URLs can name: pgx, go-sql-driver/mysql
// and modernc.org/sqlite. An app that uses one database and wants only
// that driver in its binary opens the pool itself and calls
// [sqlxstore.New] (see sqlxstore's README, "Opening the pool yourself"):
// for a PostgreSQL-only program that is about 6 MB less.
//
//	db, err := sqlxopen.Open(ctx, os.Getenv("DATABASE_URL"), sqlxstore.Config{})
//	if err != nil {
//		return err // errors.Is(err, user.ErrUnavailable): the database cannot be reached
//	}
//	defer db.Close() // closes the pool Open made
//	if err := db.Migrate(ctx); err != nil {
//		return err
//	}
package sqlxopen
