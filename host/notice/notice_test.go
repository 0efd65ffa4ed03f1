//go:build !unit

package notice_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/notice"
	"github.com/adminkernel/kernel/internal/race"
)

const base = "/api/v1/sys/notice"

type mineItem struct {
	ID          int64            `json:"id"`
	Title       string           `json:"title"`
	Content     *string          `json:"content"`
	Type        int              `json:"type"`
	PublishTime string           `json:"publishTime"`
	IsRead      bool             `json:"isRead"`
	Actions     []map[string]any `json:"actions"`
}

type sysNotice struct {
	ID           int64   `json:"id"`
	Title        string  `json:"title"`
	Type         int     `json:"type"`
	ReceiverType int     `json:"receiverType"`
	ActionsJSON  *string `json:"actionsJson"`
	CreateTime   string  `json:"createTime"`
	CreateUserID *int64  `json:"createUserId"`
}

type page[T any] struct {
	Total int `json:"total"`
	Items []T `json:"items"`
}

func publish(t *testing.T, k *kerneltest.Kernel, tok string, body map[string]any) int64 {
	t.Helper()
	var id int64
	k.Do("POST", base, tok, body).Expect(t, "publish "+fmt.Sprint(body["title"]), 200, 0).Decode(t, &id)
	if id <= 0 {
		t.Fatalf("publish returned id %d", id)
	}
	return id
}

func unread(t *testing.T, k *kerneltest.Kernel, tok string) int {
	t.Helper()
	var n int
	k.Do("GET", base+"/unread-count", tok, nil).Expect(t, "unread-count", 200, 0).Decode(t, &n)
	return n
}

func mine(t *testing.T, k *kerneltest.Kernel, tok, query string) page[mineItem] {
	t.Helper()
	var p page[mineItem]
	k.Do("GET", base+"/mine"+query, tok, nil).Expect(t, "mine"+query, 200, 0).Decode(t, &p)
	return p
}

func titles(items []mineItem) string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Title
	}
	return strings.Join(out, ",")
}

// TestNoticeOperations drives the seven operations over HTTP on the
// backend the environment selects (kerneltest.Backend).
func TestNoticeOperations(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()
	ctx := context.Background()

	aliceID := k.User("alice", "Al1ce#Passw0rd")
	bobID := k.User("bob", "B0b#Passw0rd1")
	k.User("carol", "Car0l#Passw0rd")
	role := k.Ent().SysRole.Create().SetName("notice-readers").SetCode("notice_readers").SaveX(ctx)
	k.Ent().SysUserRole.Create().SetUserID(bobID).SetRoleID(role.ID).ExecX(ctx)
	alice := k.Login("alice", "Al1ce#Passw0rd").AccessToken
	bob := k.Login("bob", "B0b#Passw0rd1").AccessToken
	carol := k.Login("carol", "Car0l#Passw0rd").AccessToken

	all := publish(t, k, admin, map[string]any{"title": "to all", "content": "hello", "type": 2, "receiverType": 0,
		"actions": []map[string]any{{"label": "Open", "method": "get", "url": "/system/user?x=1", "style": "primary", "confirm": "Sure?"}}})
	toRole := publish(t, k, admin, map[string]any{"title": "to role", "type": 1, "receiverType": 1, "receiverIds": []any{fmt.Sprint(role.ID)}})
	toAlice := publish(t, k, admin, map[string]any{"title": "to alice", "type": 3, "receiverType": 2, "receiverIds": []int64{aliceID, aliceID}})

	t.Run("publish refuses bad input", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			body any
			code errcode.Code
		}{
			{"no title", map[string]any{"title": " ", "type": 1, "receiverType": 0}, errcode.RequestInvalid},
			{"bad type", map[string]any{"title": "x", "type": 9, "receiverType": 0}, errcode.RequestInvalid},
			{"bad receiver type", map[string]any{"title": "x", "type": 1, "receiverType": 7}, errcode.RequestInvalid},
			{"roles without ids", map[string]any{"title": "x", "type": 1, "receiverType": 1}, errcode.NoticeReceiverRequired},
			{"users without ids", map[string]any{"title": "x", "type": 1, "receiverType": 2, "receiverIds": []int64{}}, errcode.NoticeReceiverRequired},
			{"unknown user", map[string]any{"title": "x", "type": 1, "receiverType": 2, "receiverIds": []int64{aliceID, 987654321}}, errcode.NoticeReceiverNotFound},
			{"unknown role", map[string]any{"title": "x", "type": 1, "receiverType": 1, "receiverIds": []int64{987654321}}, errcode.NoticeReceiverNotFound},
			{"negative id", map[string]any{"title": "x", "type": 1, "receiverType": 2, "receiverIds": []int64{-1}}, errcode.NoticeReceiverNotFound},
			{"absolute url", map[string]any{"title": "x", "type": 1, "receiverType": 0, "actions": []map[string]any{{"label": "a", "method": "GET", "url": "https://evil.example/"}}}, errcode.NoticeActionInvalid},
			{"protocol-relative url", map[string]any{"title": "x", "type": 1, "receiverType": 0, "actions": []map[string]any{{"label": "a", "method": "GET", "url": "//evil.example/"}}}, errcode.NoticeActionInvalid},
			{"backslash url", map[string]any{"title": "x", "type": 1, "receiverType": 0, "actions": []map[string]any{{"label": "a", "method": "GET", "url": "/\\evil.example"}}}, errcode.NoticeActionInvalid},
			{"javascript url", map[string]any{"title": "x", "type": 1, "receiverType": 0, "actions": []map[string]any{{"label": "a", "method": "GET", "url": "javascript:alert(1)"}}}, errcode.NoticeActionInvalid},
			{"DELETE method", map[string]any{"title": "x", "type": 1, "receiverType": 0, "actions": []map[string]any{{"label": "a", "method": "DELETE", "url": "/a"}}}, errcode.NoticeActionInvalid},
			{"no label", map[string]any{"title": "x", "type": 1, "receiverType": 0, "actions": []map[string]any{{"label": "", "method": "GET", "url": "/a"}}}, errcode.NoticeActionInvalid},
			{"bad style", map[string]any{"title": "x", "type": 1, "receiverType": 0, "actions": []map[string]any{{"label": "a", "method": "GET", "url": "/a", "style": "<script>"}}}, errcode.NoticeActionInvalid},
			{"not json", "{", errcode.RequestInvalid},
		} {
			t.Run(tc.name, func(t *testing.T) {
				k.Do("POST", base, admin, tc.body).ExpectCode(t, tc.name, tc.code)
			})
		}
		var n int
		k.Do("GET", base+"/page", admin, nil).Expect(t, "page", 200, 0)
		n = k.Ent().SysNotice.Query().CountX(ctx)
		if n != 3 {
			t.Fatalf("%d notices stored, want 3 (refused publications wrote rows)", n)
		}
	})

	t.Run("page lists live notices with filters", func(t *testing.T) {
		var p page[sysNotice]
		k.Do("GET", base+"/page", admin, nil).Expect(t, "page", 200, 0).Decode(t, &p)
		if p.Total != 3 || p.Items[0].ID != toAlice || p.Items[2].ID != all {
			t.Fatalf("page = %+v, want the 3 notices newest first", p)
		}
		if p.Items[2].ActionsJSON == nil || !strings.Contains(*p.Items[2].ActionsJSON, `"method":"GET"`) || p.Items[2].CreateUserID == nil {
			t.Fatalf("stored notice = %+v, want actions normalised and the creator", p.Items[2])
		}
		k.Do("GET", base+"/page?Title=ROLE&Type=1", admin, nil).Expect(t, "page filtered", 200, 0).Decode(t, &p)
		if p.Total != 1 || p.Items[0].ID != toRole || p.Items[0].ReceiverType != 1 {
			t.Fatalf("filtered page = %+v, want the role notice", p)
		}
		k.Do("GET", base+"/page?Type=x", admin, nil).ExpectCode(t, "bad Type", errcode.RequestInvalid)
		k.Do("GET", base+"/page", alice, nil).ExpectCode(t, "page without permission", errcode.NoPermission)
		k.Do("POST", base, alice, map[string]any{"title": "x", "type": 1, "receiverType": 0}).ExpectCode(t, "publish without permission", errcode.NoPermission)
		k.Do("GET", base+"/mine", "", nil).Expect(t, "mine anonymous", 401, int(errcode.TokenInvalid))
	})

	t.Run("mine resolves receivers at read time", func(t *testing.T) {
		if got := titles(mine(t, k, alice, "").Items); got != "to alice,to all" {
			t.Fatalf("alice sees %q", got)
		}
		if got := titles(mine(t, k, bob, "").Items); got != "to role,to all" {
			t.Fatalf("bob sees %q", got)
		}
		if got := titles(mine(t, k, carol, "").Items); got != "to all" {
			t.Fatalf("carol sees %q", got)
		}
		// Carol is granted the role after publication: she sees it now.
		carolID := k.Ent().SysUser.Query().Where().AllX(ctx)
		var cid int64
		for _, u := range carolID {
			if u.Account == "carol" {
				cid = u.ID
			}
		}
		k.Ent().SysUserRole.Create().SetUserID(cid).SetRoleID(role.ID).ExecX(ctx)
		if got := titles(mine(t, k, carol, "").Items); got != "to role,to all" {
			t.Fatalf("carol with the role sees %q", got)
		}
		it := mine(t, k, alice, "?Type=2").Items
		if len(it) != 1 || it[0].ID != all || it[0].IsRead || len(it[0].Actions) != 1 || it[0].Actions[0]["url"] != "/system/user?x=1" || it[0].PublishTime == "" {
			t.Fatalf("alice's announcements = %+v", it)
		}
		if got := titles(mine(t, k, alice, "?Title=alice").Items); got != "to alice" {
			t.Fatalf("alice's title filter = %q", got)
		}
	})

	t.Run("read one, unread count, read all", func(t *testing.T) {
		if n := unread(t, k, alice); n != 2 {
			t.Fatalf("alice unread = %d, want 2", n)
		}
		k.Do("PUT", fmt.Sprintf("%s/%d/read", base, all), alice, nil).Expect(t, "read", 200, 0)
		k.Do("PUT", fmt.Sprintf("%s/%d/read", base, all), alice, nil).Expect(t, "read twice", 200, 0)
		if n := unread(t, k, alice); n != 1 {
			t.Fatalf("alice unread after one read = %d, want 1", n)
		}
		if got := titles(mine(t, k, alice, "?OnlyUnread=true").Items); got != "to alice" {
			t.Fatalf("alice unread list = %q", got)
		}
		if n := unread(t, k, bob); n != 2 {
			t.Fatalf("bob unread = %d, want 2 (alice's read is hers)", n)
		}
		// Someone else's notice and a missing one: 45001.
		k.Do("PUT", fmt.Sprintf("%s/%d/read", base, toAlice), bob, nil).ExpectCode(t, "read another's", errcode.NoticeNotFound)
		k.Do("PUT", base+"/123456789/read", bob, nil).ExpectCode(t, "read missing", errcode.NoticeNotFound)
		k.Do("PUT", base+"/abc/read", bob, nil).ExpectCode(t, "read bad id", errcode.RequestInvalid)

		k.Do("PUT", base+"/read-all", alice, nil).Expect(t, "read all", 200, 0)
		if n := unread(t, k, alice); n != 0 {
			t.Fatalf("alice unread after read-all = %d", n)
		}
		for _, it := range mine(t, k, alice, "").Items {
			if !it.IsRead {
				t.Fatalf("alice's %q is unread after read-all", it.Title)
			}
		}
		// Read-all replaced alice's read rows by her watermark.
		if n := k.Ent().SysNoticeRead.Query().CountX(ctx); n != 0 {
			t.Fatalf("%d read rows remain after read-all, want 0", n)
		}
		if n := k.Ent().SysNoticeWatermark.Query().CountX(ctx); n != 1 {
			t.Fatalf("%d watermarks, want 1", n)
		}
		k.Do("PUT", base+"/read-all", alice, nil).Expect(t, "read all again", 200, 0)
		later := publish(t, k, admin, map[string]any{"title": "later", "type": 1, "receiverType": 0})
		if n := unread(t, k, alice); n != 1 {
			t.Fatalf("alice unread after a new notice = %d, want 1", n)
		}
		it := mine(t, k, alice, "")
		if it.Items[0].ID != later || it.Items[0].IsRead {
			t.Fatalf("newest = %+v, want the new notice unread", it.Items[0])
		}
	})

	t.Run("delete is soft", func(t *testing.T) {
		k.Do("DELETE", fmt.Sprintf("%s/%d", base, toRole), admin, nil).Expect(t, "delete", 200, 0)
		k.Do("DELETE", fmt.Sprintf("%s/%d", base, toRole), admin, nil).ExpectCode(t, "delete again", errcode.NoticeNotFound)
		k.Do("DELETE", base+"/42", admin, nil).ExpectCode(t, "delete missing", errcode.NoticeNotFound)
		k.Do("DELETE", fmt.Sprintf("%s/%d", base, all), alice, nil).ExpectCode(t, "delete without permission", errcode.NoPermission)
		row := k.Ent().SysNotice.GetX(ctx, toRole)
		if !row.IsDelete || row.DeleteKey != toRole || row.UpdateUserID == nil {
			t.Fatalf("deleted row = %+v, want soft-deleted with the deleter", row)
		}
		if got := titles(mine(t, k, bob, "").Items); strings.Contains(got, "to role") {
			t.Fatalf("bob still sees the deleted notice: %q", got)
		}
		k.Do("PUT", fmt.Sprintf("%s/%d/read", base, toRole), bob, nil).ExpectCode(t, "read deleted", errcode.NoticeNotFound)
	})
}

// rowsWritten counts the rows of the notice tables.
func noticeRows(t *testing.T, k *kerneltest.Kernel) int {
	t.Helper()
	ctx := context.Background()
	c := k.Ent()
	return c.SysNotice.Query().CountX(ctx) + c.SysNoticeReceiver.Query().CountX(ctx) +
		c.SysNoticeRead.Query().CountX(ctx) + c.SysNoticeWatermark.Query().CountX(ctx)
}

// TestBroadcastWritesConstantRows: with 100 000 users (inserted by one SQL
// statement; 10 000 under the race detector), a notice to All writes one
// row, every one of them has it unread, and a user's read or read-all
// writes one row of that user only.
func TestBroadcastWritesConstantRows(t *testing.T) {
	places := 5 // 10^places users
	if race.Enabled {
		places = 4
	}
	bulk := int64(math.Pow10(places))
	const firstID = 5_000_000
	k := kerneltest.Start(t, nil)
	admin := k.Admin()
	ctx := context.Background()
	db, _ := kerneltest.Backend(t)
	concat, arg := "'bulk' || CAST(n AS CHAR(8))", "?"
	switch db {
	case config.DBMySQL:
		concat = "CONCAT('bulk', n)"
	case config.DBPostgreSQL:
		concat = "'bulk' || CAST(n AS VARCHAR)"
	}
	if db == config.DBPostgreSQL {
		arg = "$1::timestamptz"
	}
	// 10^places rows from that many copies of the ten digits (no
	// recursion: MariaDB caps recursive CTEs at 1000 iterations by
	// default).
	digits := "(SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"
	var terms, from []string
	for i, weight := 0, 1; i < places; i, weight = i+1, weight*10 {
		alias := string(rune('a' + i))
		terms = append(terms, fmt.Sprintf("%d*%s.n", weight, alias))
		from = append(from, digits+" "+alias)
	}
	num := "(" + strings.Join(terms, " + ") + " + 1)"
	concat = strings.ReplaceAll(concat, "n", num)
	q := "INSERT INTO sys_user (id, create_time, account, name) SELECT " + fmt.Sprint(firstID) + " + " + num + ", " + arg + ", " + concat + ", 'bulk' FROM " +
		strings.Join(from, " CROSS JOIN ")
	if _, err := k.SQL().ExecContext(ctx, q, time.Now().UTC()); err != nil {
		t.Fatalf("bulk users: %v", err)
	}
	if n := k.Ent().SysUser.Query().CountX(ctx); int64(n) < bulk {
		t.Fatalf("%d users, want at least %d", n, bulk)
	}

	before := noticeRows(t, k)
	id := publish(t, k, admin, map[string]any{"title": "to everyone", "type": 2, "receiverType": 0})
	if d := noticeRows(t, k) - before; d != 1 {
		t.Fatalf("a broadcast to %d users wrote %d rows, want 1", bulk, d)
	}
	svc := notice.NewService(k.Ent(), nil, nil, nil)
	for _, u := range []int64{firstID + 1, firstID + bulk/2, firstID + bulk} {
		if n, err := svc.UnreadCount(ctx, u); err != nil || n != 1 {
			t.Fatalf("user %d unread = %d, %v; want 1", u, n, err)
		}
	}
	before = noticeRows(t, k)
	if err := svc.Read(ctx, firstID+7, id); err != nil {
		t.Fatal(err)
	}
	if err := svc.ReadAll(ctx, firstID+8); err != nil {
		t.Fatal(err)
	}
	if d := noticeRows(t, k) - before; d != 2 {
		t.Fatalf("one read and one read-all wrote %d rows, want 2", d)
	}
	for u, want := range map[int64]int{firstID + 7: 0, firstID + 8: 0, firstID + 9: 1} {
		if n, err := svc.UnreadCount(ctx, u); err != nil || n != want {
			t.Fatalf("user %d unread = %d, %v; want %d", u, n, err, want)
		}
	}
}
