package request

import (
	"strings"
	"testing"

	"entgo.io/ent/dialect/sql"
)

type orderOption func(*sql.Selector)

func TestOrder(t *testing.T) {
	cols := map[string]string{"createtime": "create_time", "name": "name"}
	def := orderOption(func(s *sql.Selector) { s.OrderBy(sql.Desc(s.C("create_time")), sql.Desc(s.C("id"))) })
	render := func(opts []orderOption) string {
		s := sql.Select("*").From(sql.Table("t"))
		for _, o := range opts {
			o(s)
		}
		q, _ := s.Query()
		return q[strings.Index(q, "ORDER BY"):]
	}
	for _, c := range []struct {
		p    Page
		tie  string
		want string
	}{
		{Page{}, "id", "ORDER BY `t`.`create_time` DESC, `t`.`id` DESC"},
		{Page{SortField: "nope"}, "id", "ORDER BY `t`.`create_time` DESC, `t`.`id` DESC"},
		{Page{SortField: " Create_Time ", Desc: false}, "id", "ORDER BY `t`.`create_time` ASC, `t`.`id` ASC"},
		{Page{SortField: "name", Desc: true}, "id", "ORDER BY `t`.`name` DESC, `t`.`id` DESC"},
		{Page{SortField: "name"}, "", "ORDER BY `t`.`name` ASC, `t`.`create_time` DESC, `t`.`id` DESC"},
	} {
		if got := render(Order(c.p, cols, c.tie, def)); got != c.want {
			t.Errorf("Order(%+v, tie %q) = %s, want %s", c.p, c.tie, got, c.want)
		}
	}
}
