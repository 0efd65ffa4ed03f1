// Package schema is the ent schema of the inventory example's own tables:
// products (with a category from the module's dictionary) and stock levels
// per organisation. The kernel creates the tables from these types
// (Module.Schema, through resource.Attach); no generated ent client is
// needed, the resources read and write them through ent's SQL builder.
package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	entschema "entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	kernel "github.com/adminkernel/kernel/ent/schema"
)

// mixins: the kernel's id, audit and soft-delete columns.
func mixins() []ent.Mixin {
	return []ent.Mixin{kernel.IDMixin{}, kernel.AuditMixin{}, kernel.SoftDeleteMixin{}}
}

// Product is a catalogue entry.
type Product struct{ ent.Schema }

// Mixin of Product.
func (Product) Mixin() []ent.Mixin { return mixins() }

// Annotations of Product.
func (Product) Annotations() []entschema.Annotation {
	return []entschema.Annotation{entsql.Annotation{Table: "inv_product"}}
}

// Fields of Product.
func (Product) Fields() []ent.Field {
	return []ent.Field{
		field.String("sku").MaxRuneLen(32),
		field.String("name").MaxRuneLen(64),
		field.String("category").MaxRuneLen(16),
		field.Float("price").Default(0),
		field.Bool("enabled").Default(true),
		field.Text("description").Optional(),
	}
}

// Indexes of Product.
func (Product) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("sku", "delete_key").Unique(),
		index.Fields("is_delete", "create_time", "id"),
	}
}

// StockLevel is what one organisation holds of a product.
type StockLevel struct{ ent.Schema }

// Mixin of StockLevel.
func (StockLevel) Mixin() []ent.Mixin { return mixins() }

// Annotations of StockLevel.
func (StockLevel) Annotations() []entschema.Annotation {
	return []entschema.Annotation{entsql.Annotation{Table: "inv_stock_level"}}
}

// Fields of StockLevel.
func (StockLevel) Fields() []ent.Field {
	return []ent.Field{
		field.String("sku").MaxRuneLen(32),
		field.Int64("org_id"),
		field.Int64("quantity").Default(0),
		field.Int64("reorder_level").Default(0),
		field.Time("counted_on").Optional(),
		field.String("note").MaxRuneLen(200).Optional(),
	}
}

// Indexes of StockLevel.
func (StockLevel) Indexes() []ent.Index {
	return []ent.Index{
		// One row per product and site.
		index.Fields("sku", "org_id", "delete_key").Unique(),
		// The list's default order, the site filter (and data scope), and
		// the sort by quantity.
		index.Fields("is_delete", "create_time", "id"),
		index.Fields("org_id", "is_delete", "id"),
		index.Fields("is_delete", "quantity", "id"),
	}
}
