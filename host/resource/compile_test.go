package resource

import (
	"strings"
	"testing"
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	entschema "entgo.io/ent/schema"
	entfield "entgo.io/ent/schema/field"

	"github.com/adminkernel/kernel/ent/schema"
)

type probe struct {
	ent.Schema
	fields []ent.Field
	table  string
}

func (p probe) Mixin() []ent.Mixin {
	return []ent.Mixin{schema.IDMixin{}, schema.AuditMixin{}, schema.SoftDeleteMixin{}}
}
func (p probe) Annotations() []entschema.Annotation {
	return []entschema.Annotation{entsql.Annotation{Table: p.table}}
}
func (p probe) Fields() []ent.Field { return p.fields }

// A description that does not match its schema stops composition with the
// resource and the field named.
func TestCompileRefuses(t *testing.T) {
	lab := Text{ZH: "名", EN: "Name"}
	base := func(fields []ent.Field, fs ...Field) Resource {
		return Resource{Name: "probe", Path: "/probe", Label: lab, Schema: probe{fields: fields, table: "probe"}, Fields: fs}
	}
	name := []ent.Field{entfield.String("name").MaxRuneLen(10)}
	cases := []struct {
		r    Resource
		want string
	}{
		{base(name, Field{Name: "nope", Label: lab, Form: true}), "no column nope"},
		{base(name, Field{Name: "name", Label: lab, Type: Int, Form: true, Required: true}), "needs an integer column"},
		{base(name, Field{Name: "name", Label: Text{ZH: "x"}, Form: true, Required: true}), "both languages"},
		{base(name), "no fields"},
		{base([]ent.Field{entfield.String("name"), entfield.Time("seen").Default(time.Now)}, Field{Name: "name", Label: lab, Form: true, Required: true}),
			"column seen is NOT NULL without a default"},
		{base(name, Field{Name: "name", Label: lab, Form: true}), "NOT NULL without a default"},
		{base(name, Field{Name: "name", Label: lab, Form: true, Required: true, Filter: Range}), "range filter needs"},
		{Resource{Name: "Bad Name", Path: "/probe", Label: lab, Schema: probe{fields: name, table: "probe"}}, "name must be"},
		{Resource{Name: "probe", Path: "/sys/probe", Label: lab, Schema: probe{fields: name, table: "probe"}}, "outside /sys"},
		{Resource{Name: "probe", Path: "/probe", Label: lab, Schema: probe{fields: name, table: "sys_probe"},
			Fields: []Field{{Name: "name", Label: lab, Form: true, Required: true}}}, "sys_ tables"},
		{base(name, Field{Name: "name", Label: lab, Form: true, Required: true}, Field{Name: "createTime", Label: lab, Form: true}), "written by the kernel"},
	}
	for _, c := range cases {
		_, err := compile(c.r)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.r.Fields, err, c.want)
		}
	}
	if _, err := compile(base(name, Field{Name: "name", Label: lab, Form: true, Required: true})); err != nil {
		t.Fatalf("a valid description: %v", err)
	}
}
