//go:build !unit

package database_test

import (
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/database/dbtest"
)

// TestMigrationFilesMatchEntSchemaServers is TestMigrationFilesMatchEntSchema
// on PostgreSQL and MariaDB (whatever ADMINKERNEL_TEST_DIALECTS says: the
// files of every dialect must follow the ent schema). An unreachable server
// fails the test.
func TestMigrationFilesMatchEntSchemaServers(t *testing.T) {
	for _, d := range []string{config.DBPostgreSQL, config.DBMySQL} {
		t.Run(d, func(t *testing.T) {
			assertFilesMatchSchema(t, dbtest.Open(t, d))
		})
	}
}
