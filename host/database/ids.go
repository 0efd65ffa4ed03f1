package database

import (
	"context"
	"errors"

	"github.com/adminkernel/kernel/ent"
)

// ErrNoIDSource is returned by a create whose row has no id when the
// database was opened without WithIDs.
var ErrNoIDSource = errors.New("database: a row was created without an id and the database was opened without an id source (database.WithIDs)")

// WithIDs gives the client the source of the ids of created rows: the
// snowflake generator of the kernel that opens it (its Next method). The
// schema declares no id default, so Open installs a create hook that sets
// the id of every created row, bulk creates included, unless the caller set
// one (seed rows). Without WithIDs such a create fails with ErrNoIDSource
// instead of letting the database pick an id.
func WithIDs(next func() int64) Option {
	return func(o *options) { o.nextID = next }
}

// idSetter is implemented by every generated mutation: the id is a
// user-defined field of every entity (schema.IDMixin).
type idSetter interface {
	ID() (int64, bool)
	SetID(int64)
}

// IDHook sets the id of created rows that have none from next (nil: such
// creates fail with ErrNoIDSource). Open installs it; a test that builds
// its own client over DB.SQL installs it with client.Use.
func IDHook(next func() int64) ent.Hook {
	return func(mut ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			if s, ok := m.(idSetter); ok && m.Op().Is(ent.OpCreate) {
				if _, set := s.ID(); !set {
					if next == nil {
						return nil, ErrNoIDSource
					}
					s.SetID(next())
				}
			}
			return mut.Mutate(ctx, m)
		})
	}
}
