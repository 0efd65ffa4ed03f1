package database

import "context"

// HasDataStep reports whether a migration version has a Go data step.
func HasDataStep(version int) bool {
	before, after := dataSteps(version)
	return before != nil || after != nil
}

// SearchIndex runs the after-step of searchIndexVersion on db again.
func SearchIndex(ctx context.Context, db *DB) error { return db.searchIndex(ctx, db.SQL) }
