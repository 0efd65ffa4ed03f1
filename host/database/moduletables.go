package database

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/entsql"
	sqldrv "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"
	entfield "entgo.io/ent/schema/field"

	"github.com/adminkernel/kernel/config"
)

// ErrModuleTablesBehind is returned (wrapped) by EnsureModuleTables in
// Production when a module's tables are missing or lack columns or
// indexes.
var ErrModuleTablesBehind = errors.New("database: module tables are behind their schema")

// TablesOf builds the tables of modules' ent schemas (their own tables,
// outside the kernel's sys_ prefix) the way ent's generated migrate
// package describes the kernel's: columns from the mixins' and the
// schema's fields, the primary key id, unique fields and the schema's
// indexes. Only what ent's field descriptors say is used: edges and
// foreign keys are not (the house has none).
func TablesOf(schemas []ent.Interface) ([]*schema.Table, error) {
	var out []*schema.Table
	seen := map[string]bool{}
	for _, sc := range schemas {
		t, err := tableOf(sc)
		if err != nil {
			return nil, err
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("table %s declared twice", t.Name)
		}
		seen[t.Name] = true
		out = append(out, t)
	}
	return out, nil
}

func tableOf(sc ent.Interface) (*schema.Table, error) {
	name := ""
	for _, a := range sc.Annotations() {
		switch ea := a.(type) {
		case entsql.Annotation:
			if ea.Table != "" {
				name = ea.Table
			}
		case *entsql.Annotation:
			if ea != nil && ea.Table != "" {
				name = ea.Table
			}
		}
	}
	if name == "" {
		return nil, fmt.Errorf("schema %T has no entsql.Annotation{Table: ...}", sc)
	}
	if strings.HasPrefix(name, "sys_") {
		return nil, fmt.Errorf("schema %T: table %s: the sys_ prefix is the kernel's", sc, name)
	}
	var fields []ent.Field
	for _, m := range sc.Mixin() {
		fields = append(fields, m.Fields()...)
	}
	fields = append(fields, sc.Fields()...)
	t := schema.NewTable(name)
	byName := map[string]*schema.Column{}
	for _, f := range fields {
		d := f.Descriptor()
		if d.Err != nil {
			return nil, fmt.Errorf("table %s field %s: %w", name, d.Name, d.Err)
		}
		col := d.StorageKey
		if col == "" {
			col = d.Name
		}
		if _, dup := byName[col]; dup {
			return nil, fmt.Errorf("table %s: column %s declared twice", name, col)
		}
		c := &schema.Column{Name: col, Type: d.Info.Type, SchemaType: d.SchemaType, Size: int64(d.Size),
			Nullable: d.Optional, Unique: d.Unique, Comment: d.Comment}
		if d.Info.Type == entfield.TypeEnum {
			for _, e := range d.Enums {
				c.Enums = append(c.Enums, e.V)
			}
		}
		// Constant defaults only (a func default, like time.Now, is the
		// writer's business, as in ent's generated tables).
		switch v := d.Default.(type) {
		case bool, string, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
			c.Default = v
		}
		byName[col] = c
		if col == "id" {
			t.AddPrimary(c)
		} else {
			t.AddColumn(c)
		}
	}
	if _, ok := byName["id"]; !ok {
		return nil, fmt.Errorf("table %s has no id column (embed schema.IDMixin)", name)
	}
	for _, ix := range sc.Indexes() {
		d := ix.Descriptor()
		cols := make([]*schema.Column, 0, len(d.Fields))
		for _, fn := range d.Fields {
			c, ok := byName[fn]
			if !ok {
				return nil, fmt.Errorf("table %s: index on unknown column %s", name, fn)
			}
			cols = append(cols, c)
		}
		iname := d.StorageKey
		if iname == "" {
			iname = strings.ReplaceAll(name, "_", "") + "_" + strings.Join(d.Fields, "_")
		}
		t.Indexes = append(t.Indexes, &schema.Index{Name: iname, Unique: d.Unique, Columns: cols})
	}
	return t, nil
}

// driver is an ent driver over the pool (not to be closed: it would close
// the pool).
func (d *DB) driver() dialect.Driver { return sqldrv.OpenDB(d.Dialect, d.SQL) }

// PlanModuleTables writes the DDL that would create or extend the
// modules' tables (nothing when they match their schema).
func (d *DB) PlanModuleTables(ctx context.Context, tables []*schema.Table) (string, error) {
	if len(tables) == 0 {
		return "", nil
	}
	var buf bytes.Buffer
	m, err := schema.NewMigrate(&schema.WriteDriver{Driver: d.driver(), Writer: &buf},
		schema.WithDropColumn(false), schema.WithDropIndex(false), schema.WithForeignKeys(false))
	if err != nil {
		return "", err
	}
	if err := m.Create(ctx, tables...); err != nil {
		return "", fmt.Errorf("plan the module tables: %w", err)
	}
	return buf.String(), nil
}

// ApplyModuleTables creates or extends the modules' tables (additive:
// nothing is dropped) and returns the names of the tables it changed.
func (d *DB) ApplyModuleTables(ctx context.Context, tables []*schema.Table) ([]string, error) {
	plan, err := d.PlanModuleTables(ctx, tables)
	if err != nil || strings.TrimSpace(plan) == "" {
		return nil, err
	}
	m, err := schema.NewMigrate(d.driver(), schema.WithDropColumn(false), schema.WithDropIndex(false), schema.WithForeignKeys(false))
	if err != nil {
		return nil, err
	}
	if err := m.Create(ctx, tables...); err != nil {
		return nil, fmt.Errorf("create the module tables: %w", err)
	}
	var changed []string
	for _, t := range tables {
		if strings.Contains(plan, t.Name) {
			changed = append(changed, t.Name)
		}
	}
	sort.Strings(changed)
	return changed, nil
}

// EnsureModuleTables applies the schema policy of EnsureSchema to the
// modules' own tables: created or extended at startup outside Production
// (and in Production with Service:Database:EnableCodeFirstInProduction);
// in Production otherwise a start with tables behind their schema is
// refused, naming `adminkernel migrate`, which applies them.
func EnsureModuleTables(ctx context.Context, cfg *config.Config, d *DB, tables []*schema.Table) error {
	if len(tables) == 0 {
		return nil
	}
	if !cfg.IsProduction() || cfg.Service.Database.EnableCodeFirstInProduction {
		changed, err := d.ApplyModuleTables(ctx, tables)
		if err != nil {
			return err
		}
		if len(changed) > 0 {
			d.log.Info("module tables created or extended", "tables", strings.Join(changed, ","))
		}
		return nil
	}
	plan, err := d.PlanModuleTables(ctx, tables)
	if err != nil {
		return err
	}
	if strings.TrimSpace(plan) != "" {
		return fmt.Errorf("%w (%s): tables are not changed automatically in the %s environment: run `adminkernel migrate` "+
			"(`adminkernel migrate --print` prints the SQL first), or set Service:Database:EnableCodeFirstInProduction=true",
			ErrModuleTablesBehind, d.DbType, cfg.Environment)
	}
	return nil
}
