package database

import (
	"context"

	"github.com/adminkernel/kernel/ent"
)

// WithTx runs fn in a transaction on client: committed when fn succeeds,
// rolled back otherwise (a panic included, which is then re-raised).
func WithTx(ctx context.Context, client *ent.Client, fn func(tx *ent.Tx) error) error {
	tx, err := client.Tx(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if v := recover(); v != nil {
			_ = tx.Rollback()
			panic(v)
		}
	}()
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
