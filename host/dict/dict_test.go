package dict_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent/sysdictitem"
	"github.com/adminkernel/kernel/ent/sysdicttype"
	"github.com/adminkernel/kernel/host/dict"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/kerneltest"
)

const (
	typeBase = "/api/v1/sys/dict/type"
	itemBase = "/api/v1/sys/dict/item"
	items    = "/api/v1/sys/dict/items/"
)

type dtype struct {
	ID           int64   `json:"id"`
	IsDelete     bool    `json:"isDelete"`
	CreateTime   string  `json:"createTime"`
	CreateUserID *int64  `json:"createUserId"`
	UpdateTime   *string `json:"updateTime"`
	Code         string  `json:"code"`
	Name         string  `json:"name"`
	Sort         int     `json:"sort"`
	Enabled      bool    `json:"enabled"`
	Remark       *string `json:"remark"`
}

type item struct {
	ID           int64  `json:"id"`
	IsDelete     bool   `json:"isDelete"`
	CreateTime   string `json:"createTime"`
	DictTypeCode string `json:"dictTypeCode"`
	Label        string `json:"label"`
	Value        string `json:"value"`
	Sort         int    `json:"sort"`
	Enabled      bool   `json:"enabled"`
}

type page[T any] struct {
	Current int `json:"current"`
	Size    int `json:"size"`
	Total   int `json:"total"`
	Items   []T `json:"items"`
}

func newID(t *testing.T, r kerneltest.Reply, what string) int64 {
	t.Helper()
	var id int64
	r.Expect(t, what, 200, 0).Decode(t, &id)
	if id < 1000 {
		t.Fatalf("%s: id %d is in the seed range", what, id)
	}
	return id
}

func addType(t *testing.T, k *kerneltest.Kernel, tok, code string) int64 {
	t.Helper()
	return newID(t, k.Do("POST", typeBase, tok, map[string]any{"code": code, "name": code + " 名称", "sort": 5, "enabled": true}), "add type "+code)
}

func addItem(t *testing.T, k *kerneltest.Kernel, tok, code, label, value string, sort int, enabled bool) int64 {
	t.Helper()
	body := map[string]any{"dictTypeCode": code, "label": label, "value": value, "sort": sort, "enabled": enabled}
	return newID(t, k.Do("POST", itemBase, tok, body), "add item "+code+"="+value)
}

func listItems(t *testing.T, k *kerneltest.Kernel, tok, code string) string {
	t.Helper()
	var out []item
	k.Do("GET", items+code, tok, nil).Expect(t, "items "+code, 200, 0).Decode(t, &out)
	parts := make([]string, len(out))
	for i, it := range out {
		if !it.Enabled || it.DictTypeCode != code {
			t.Fatalf("items %s returned %+v", code, it)
		}
		parts[i] = it.Label + "=" + it.Value
	}
	return strings.Join(parts, ",")
}

func TestTypes(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	id := newID(t, k.Do("POST", typeBase, tok, map[string]any{"code": "order_status", "name": "订单状态", "sort": "3", "remark": "r"}), "add type")

	var got dtype
	k.Do("GET", fmt.Sprintf("%s/%d", typeBase, id), tok, nil).Expect(t, "get type", 200, 0).Decode(t, &got)
	if got.Code != "order_status" || got.Name != "订单状态" || got.Sort != 3 || !got.Enabled || deref(got.Remark) != "r" || got.CreateUserID == nil || got.CreateTime == "" {
		t.Fatalf("type = %+v (enabled defaults to true)", got)
	}

	pages := []struct {
		query string
		want  string
	}{
		{"Code=STATUS", "common_status,order_status"},
		{"Name=状态", "common_status,order_status"},
		{"code=gender", "gender"},
		{"Code=status&SortField=code&SortOrder=desc", "order_status,common_status"},
		{"Code=nothing", ""},
	}
	for _, tt := range pages {
		t.Run("page "+tt.query, func(t *testing.T) {
			var p page[dtype]
			k.Do("GET", typeBase+"/page?"+tt.query, tok, nil).Expect(t, "type page", 200, 0).Decode(t, &p)
			var codes []string
			for _, it := range p.Items {
				codes = append(codes, it.Code)
			}
			if strings.Join(codes, ",") != tt.want || p.Total != len(codes) {
				t.Fatalf("codes = %v (total %d), want %s", codes, p.Total, tt.want)
			}
		})
	}

	errs := []struct {
		name         string
		method, path string
		body         any
		status, code int
	}{
		{"add: code taken", "POST", typeBase, map[string]any{"code": "gender", "name": "x"}, 200, 43002},
		{"add: code taken by a new type", "POST", typeBase, map[string]any{"code": "order_status", "name": "x"}, 200, 43002},
		{"add: code not an identifier", "POST", typeBase, map[string]any{"code": "a/b", "name": "x"}, 400, 48002},
		{"add: no name", "POST", typeBase, map[string]any{"code": "no_name"}, 400, 48002},
		{"add: enabled not a bool", "POST", typeBase, map[string]any{"code": "x1", "name": "x", "enabled": "maybe"}, 400, 48002},
		{"get: missing", "GET", typeBase + "/999999", nil, 200, 43001},
		{"get: bad id", "GET", typeBase + "/x", nil, 400, 48002},
		{"update: missing", "PUT", typeBase + "/999999", map[string]any{"name": "x"}, 200, 43001},
		{"delete: missing", "DELETE", typeBase + "/999999", nil, 200, 43001},
		{"batch-delete: no body", "POST", typeBase + "/batch-delete", nil, 400, 48002},
		{"batch-delete: bad id", "POST", typeBase + "/batch-delete", map[string]any{"ids": []int64{0}}, 400, 48002},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			k.Do(tt.method, tt.path, tok, tt.body).Expect(t, tt.name, tt.status, tt.code)
		})
	}

	// PUT ignores the code.
	k.Do("PUT", fmt.Sprintf("%s/%d", typeBase, id), tok, map[string]any{"code": "renamed", "name": "状态2", "sort": 9, "enabled": false}).Expect(t, "update type", 200, 0)
	k.Do("GET", fmt.Sprintf("%s/%d", typeBase, id), tok, nil).Expect(t, "get type", 200, 0).Decode(t, &got)
	if got.Code != "order_status" || got.Name != "状态2" || got.Sort != 9 || got.Enabled || got.Remark != nil || got.UpdateTime == nil {
		t.Fatalf("updated type = %+v", got)
	}

	// Deleting a type deletes its items and frees its code.
	addItem(t, k, tok, "order_status", "新建", "new", 1, true)
	addItem(t, k, tok, "order_status", "关闭", "closed", 2, false)
	if got := listItems(t, k, tok, "order_status"); got != "新建=new" {
		t.Fatalf("items = %s", got)
	}
	k.Do("DELETE", fmt.Sprintf("%s/%d", typeBase, id), tok, nil).Expect(t, "delete type", 200, 0)
	k.Do("DELETE", fmt.Sprintf("%s/%d", typeBase, id), tok, nil).Expect(t, "delete type twice", 200, 43001)
	ctx := context.Background()
	if n := k.Ent().SysDictItem.Query().Where(sysdictitem.DictTypeCode("order_status"), sysdictitem.IsDelete(false)).CountX(ctx); n != 0 {
		t.Fatalf("%d live items left after deleting their type", n)
	}
	for _, it := range k.Ent().SysDictItem.Query().Where(sysdictitem.DictTypeCode("order_status")).AllX(ctx) {
		if !it.IsDelete || it.DeleteKey != it.ID {
			t.Fatalf("item %d: is_delete=%v delete_key=%d", it.ID, it.IsDelete, it.DeleteKey)
		}
	}
	if got := listItems(t, k, tok, "order_status"); got != "" {
		t.Fatalf("items of a deleted type = %s (stale cache?)", got)
	}
	var p page[item]
	k.Do("GET", itemBase+"/page?TypeCode=order_status", tok, nil).Expect(t, "item page", 200, 0).Decode(t, &p)
	if p.Total != 0 {
		t.Fatalf("item page of a deleted type = %+v", p)
	}
	again := addType(t, k, tok, "order_status")
	addItem(t, k, tok, "order_status", "新建", "new", 1, true) // the value is free again too
	if again == id {
		t.Fatal("re-created type reused the deleted id")
	}

	// Batch delete: missing ids are skipped.
	a, b := addType(t, k, tok, "bd_a"), addType(t, k, tok, "bd_b")
	addItem(t, k, tok, "bd_a", "A", "a", 1, true)
	k.Do("POST", typeBase+"/batch-delete", tok, map[string]any{"ids": []any{a, fmt.Sprint(b), 999999}}).Expect(t, "batch delete types", 200, 0)
	if n := k.Ent().SysDictType.Query().Where(sysdicttype.IDIn(a, b), sysdicttype.IsDelete(false)).CountX(ctx); n != 0 {
		t.Fatalf("%d types left after batch delete", n)
	}
	if got := listItems(t, k, tok, "bd_a"); got != "" {
		t.Fatalf("items after batch delete = %s", got)
	}
	k.Do("POST", typeBase+"/batch-delete", tok, map[string]any{"ids": []int64{}}).Expect(t, "empty batch delete", 200, 0)
}

func TestItems(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	addType(t, k, tok, "color")
	red := addItem(t, k, tok, "color", "红", "red", 2, true)
	addItem(t, k, tok, "color", "绿", "green", 1, true)
	addItem(t, k, tok, "color", "灰", "grey", 0, false)

	if got := listItems(t, k, tok, "color"); got != "绿=green,红=red" {
		t.Fatalf("items = %s, want enabled items sorted by sort", got)
	}
	if got := listItems(t, k, tok, "gender"); got != "男=1,女=2,未知=0" {
		t.Fatalf("seeded gender = %s", got)
	}
	if got := listItems(t, k, tok, "no_such_type"); got != "" {
		t.Fatalf("unknown type = %s", got)
	}
	var p page[item]
	k.Do("GET", itemBase+"/page?TypeCode=color&Size=2", tok, nil).Expect(t, "item page", 200, 0).Decode(t, &p)
	if p.Total != 3 || len(p.Items) != 2 || p.Items[0].Value != "grey" || p.Items[0].Enabled {
		t.Fatalf("item page (disabled included, by sort) = %+v", p)
	}
	k.Do("GET", itemBase+"/page?typecode=color&Current=2&Size=2", tok, nil).Expect(t, "item page 2", 200, 0).Decode(t, &p)
	if len(p.Items) != 1 || p.Items[0].ID != red {
		t.Fatalf("item page 2 = %+v", p)
	}
	k.Do("GET", itemBase+"/page?TypeCode=color&SortField=value&SortOrder=desc", tok, nil).Expect(t, "item page sorted", 200, 0).Decode(t, &p)
	if p.Items[0].Value != "red" || p.Items[2].Value != "green" {
		t.Fatalf("sorted by value desc = %+v", p.Items)
	}
	k.Do("GET", itemBase+"/page?Size=201", tok, nil).Expect(t, "item page too large", 200, 48001)

	errs := []struct {
		name         string
		method, path string
		body         any
		status, code int
	}{
		{"add: unknown type", "POST", itemBase, map[string]any{"dictTypeCode": "nope", "label": "x", "value": "x"}, 200, 43001},
		{"add: type code not an identifier", "POST", itemBase, map[string]any{"dictTypeCode": "a/b", "label": "x", "value": "x"}, 200, 43001},
		{"add: value taken", "POST", itemBase, map[string]any{"dictTypeCode": "color", "label": "赤", "value": "red"}, 200, 43011},
		{"add: value taken by a disabled item", "POST", itemBase, map[string]any{"dictTypeCode": "color", "label": "灰2", "value": "grey"}, 200, 43011},
		{"add: seeded value taken", "POST", itemBase, map[string]any{"dictTypeCode": "gender", "label": "M", "value": "1"}, 200, 43011},
		{"add: no label", "POST", itemBase, map[string]any{"dictTypeCode": "color", "value": "blue"}, 400, 48002},
		{"add: no value", "POST", itemBase, map[string]any{"dictTypeCode": "color", "label": "蓝"}, 400, 48002},
		{"update: missing", "PUT", itemBase + "/999999", map[string]any{"label": "x", "value": "x"}, 200, 43003},
		{"update: value taken", "PUT", fmt.Sprintf("%s/%d", itemBase, red), map[string]any{"label": "红", "value": "green"}, 200, 43011},
		{"update: move to unknown type", "PUT", fmt.Sprintf("%s/%d", itemBase, red), map[string]any{"dictTypeCode": "nope", "label": "红", "value": "red"}, 200, 43001},
		{"delete: missing", "DELETE", itemBase + "/999999", nil, 200, 43003},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			k.Do(tt.method, tt.path, tok, tt.body).Expect(t, tt.name, tt.status, tt.code)
		})
	}

	// The same value in another type is fine.
	addItem(t, k, tok, "gender", "红", "red", 9, true)

	// Update keeps the type when dictTypeCode is empty; the own value is no
	// conflict.
	k.Do("PUT", fmt.Sprintf("%s/%d", itemBase, red), tok, map[string]any{"label": "大红", "value": "red", "sort": "0", "enabled": true}).Expect(t, "update item", 200, 0)
	if got := listItems(t, k, tok, "color"); got != "大红=red,绿=green" {
		t.Fatalf("items after update = %s", got)
	}
	// Moving an item to another type refreshes both.
	addType(t, k, tok, "shade")
	_ = listItems(t, k, tok, "shade")
	k.Do("PUT", fmt.Sprintf("%s/%d", itemBase, red), tok, map[string]any{"dictTypeCode": "shade", "label": "大红", "value": "red"}).Expect(t, "move item", 200, 0)
	if c, s := listItems(t, k, tok, "color"), listItems(t, k, tok, "shade"); c != "绿=green" || s != "大红=red" {
		t.Fatalf("after move: color=%s shade=%s", c, s)
	}
	k.Do("DELETE", fmt.Sprintf("%s/%d", itemBase, red), tok, nil).Expect(t, "delete item", 200, 0)
	k.Do("DELETE", fmt.Sprintf("%s/%d", itemBase, red), tok, nil).Expect(t, "delete item twice", 200, 43003)
	if got := listItems(t, k, tok, "shade"); got != "" {
		t.Fatalf("items after delete = %s", got)
	}
	addItem(t, k, tok, "shade", "红", "red", 1, true) // a deleted value is free again
}

func TestItemsCacheInvalidatedOnChange(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	ctx := context.Background()
	addType(t, k, tok, "level")
	lo := addItem(t, k, tok, "level", "低", "1", 1, true)

	steps := []struct {
		name   string
		change func()
		want   string
	}{
		{"add", func() { addItem(t, k, tok, "level", "高", "3", 3, true) }, "低=1,高=3"},
		{"update label and sort", func() {
			k.Do("PUT", fmt.Sprintf("%s/%d", itemBase, lo), tok, map[string]any{"label": "很低", "value": "1", "sort": 9, "enabled": true}).Expect(t, "update", 200, 0)
		}, "高=3,很低=1"},
		{"disable", func() {
			k.Do("PUT", fmt.Sprintf("%s/%d", itemBase, lo), tok, map[string]any{"label": "很低", "value": "1", "sort": 9, "enabled": false}).Expect(t, "disable", 200, 0)
		}, "高=3"},
		{"batch delete", func() {
			var p page[item]
			k.Do("GET", itemBase+"/page?TypeCode=level", tok, nil).Expect(t, "page", 200, 0).Decode(t, &p)
			ids := make([]int64, len(p.Items))
			for i, it := range p.Items {
				ids[i] = it.ID
			}
			k.Do("POST", itemBase+"/batch-delete", tok, map[string]any{"ids": ids}).Expect(t, "batch delete", 200, 0)
		}, ""},
		{"out-of-band insert, then Invalidate", func() {
			k.Ent().SysDictItem.Create().SetDictTypeCode("level").SetLabel("中").SetValue("2").ExecX(ctx)
			if got := listItems(t, k, tok, "level"); got != "" {
				t.Fatalf("items not served from the cache: %s", got)
			}
			if err := dict.Invalidate(ctx, k.Cache(), k.Events(), "level"); err != nil {
				t.Fatal(err)
			}
		}, "中=2"},
		{"out-of-band edit, then InvalidateAll", func() {
			k.Ent().SysDictItem.Update().Where(sysdictitem.DictTypeCode("level")).SetLabel("中等").ExecX(ctx)
			_ = listItems(t, k, tok, "gender")
			n, err := dict.InvalidateAll(ctx, k.Cache(), k.Events())
			if err != nil || n != 2 {
				t.Fatalf("InvalidateAll = %d, %v; want the 2 cached types", n, err)
			}
		}, "中等=2"},
	}
	for _, st := range steps {
		_ = listItems(t, k, tok, "level") // cached before each change
		st.change()
		if got := listItems(t, k, tok, "level"); got != st.want {
			t.Fatalf("%s: items = %q, want %q", st.name, got, st.want)
		}
	}
}

func TestSeedProtection(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	ctx := context.Background()
	id := addType(t, k, tok, "mine")
	own := addItem(t, k, tok, "gender", "其他", "9", 4, true)
	tests := []struct {
		name, method, path string
		body               any
	}{
		{"seed type", "DELETE", typeBase + "/1", nil},
		{"seed types in a batch", "POST", typeBase + "/batch-delete", map[string]any{"ids": []int64{id, 3}}},
		{"seed item", "DELETE", itemBase + "/1", nil},
		{"seed items in a batch", "POST", itemBase + "/batch-delete", map[string]any{"ids": []int64{own, 8}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k.Do(tt.method, tt.path, tok, tt.body).Expect(t, tt.name, 200, 43010)
		})
	}
	if n := k.Ent().SysDictType.Query().Where(sysdicttype.IsDelete(false), sysdicttype.IDIn(1, 3, id)).CountX(ctx); n != 3 {
		t.Fatalf("%d of 3 types live after refused deletes", n)
	}
	if n := k.Ent().SysDictItem.Query().Where(sysdictitem.IsDelete(false), sysdictitem.IDIn(1, 8, own)).CountX(ctx); n != 3 {
		t.Fatalf("%d of 3 items live after refused deletes", n)
	}
	// Seed rows stay editable.
	k.Do("PUT", typeBase+"/3", tok, map[string]any{"name": "性别2", "sort": 1}).Expect(t, "update seed type", 200, 0)
	k.Do("PUT", itemBase+"/8", tok, map[string]any{"label": "保密", "value": "0", "sort": 3, "enabled": true}).Expect(t, "update seed item", 200, 0)
	if got := listItems(t, k, tok, "gender"); got != "男=1,女=2,保密=0,其他=9" {
		t.Fatalf("gender = %s", got)
	}
	k.Do("DELETE", fmt.Sprintf("%s/%d", itemBase, own), tok, nil).Expect(t, "delete own item of a seed type", 200, 0)
	k.Do("DELETE", fmt.Sprintf("%s/%d", typeBase, id), tok, nil).Expect(t, "delete own type", 200, 0)
}

func TestAccess(t *testing.T) {
	k := kerneltest.Start(t, nil)
	k.User("viewer", "Viewer#Pass1", "GET:/api/v1/sys/dict/item/page")
	k.User("nobody", "Nobody#Pass1")
	viewer := k.Login("viewer", "Viewer#Pass1").AccessToken
	nobody := k.Login("nobody", "Nobody#Pass1").AccessToken
	tests := []struct {
		name, method, path string
		token              string
		body               any
		status, code       int
	}{
		{"items need a session", "GET", items + "gender", "", nil, 401, 40006},
		{"items need no permission", "GET", items + "gender", nobody, nil, 200, 0},
		{"granted item page", "GET", itemBase + "/page?TypeCode=gender", viewer, nil, 200, 0},
		{"type page not granted", "GET", typeBase + "/page", viewer, nil, 403, 41001},
		{"type detail not granted", "GET", typeBase + "/1", viewer, nil, 403, 41001},
		{"add type not granted", "POST", typeBase, viewer, map[string]any{"code": "x", "name": "x"}, 403, 41001},
		{"update type not granted", "PUT", typeBase + "/1", viewer, map[string]any{"name": "x"}, 403, 41001},
		{"delete type not granted", "DELETE", typeBase + "/1", viewer, nil, 403, 41001},
		{"batch delete types not granted", "POST", typeBase + "/batch-delete", viewer, map[string]any{"ids": []int64{}}, 403, 41001},
		{"add item not granted", "POST", itemBase, nobody, map[string]any{"dictTypeCode": "gender", "label": "x", "value": "x"}, 403, 41001},
		{"update item not granted", "PUT", itemBase + "/1", nobody, map[string]any{"label": "x", "value": "x"}, 403, 41001},
		{"delete item not granted", "DELETE", itemBase + "/1", nobody, nil, 403, 41001},
		{"batch delete items not granted", "POST", itemBase + "/batch-delete", nobody, map[string]any{"ids": []int64{}}, 403, 41001},
		{"item page needs a token", "GET", itemBase + "/page", "", nil, 401, 40006},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k.Do(tt.method, tt.path, tt.token, tt.body).Expect(t, tt.name, tt.status, tt.code)
		})
	}
}

func TestChangeEvents(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	var mu sync.Mutex
	var got []string
	cancel := k.Events().Subscribe(func(e events.Event) {
		if e, ok := e.(events.DictChanged); ok && (e.TypeCode == "" || strings.HasPrefix(e.TypeCode, "ev_")) {
			mu.Lock()
			got = append(got, e.TypeCode)
			mu.Unlock()
		}
	})
	defer cancel()
	id := addType(t, k, tok, "ev_a")
	addItem(t, k, tok, "ev_a", "x", "x", 1, true)
	k.Do("DELETE", fmt.Sprintf("%s/%d", typeBase, id), tok, nil).Expect(t, "delete", 200, 0)
	if _, err := dict.InvalidateAll(context.Background(), k.Cache(), k.Events()); err != nil {
		t.Fatal(err)
	}
	// Delivery is asynchronous: wait for the four events.
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	for deadline := time.Now().Add(5 * time.Second); count() < 4 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprintf("%q", got) != `["ev_a" "ev_a" "ev_a" ""]` {
		t.Fatalf("events = %q", got)
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}
