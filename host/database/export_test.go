package database

import "context"

// HasDataStep reports whether a migration version has a Go data step.
func HasDataStep(version int) bool {
	before, after := dataSteps(version)
	return before != nil || after != nil
}

// MySQLIndexes runs the after-steps of the MySQL/MariaDB indexes on db
// again and returns their names.
func MySQLIndexes(ctx context.Context, db *DB) ([]string, error) {
	var names []string
	for _, ix := range mysqlIndexes {
		if err := db.createMySQLIndex(ctx, db.SQL, ix); err != nil {
			return nil, err
		}
		names = append(names, ix.name)
	}
	return names, nil
}
