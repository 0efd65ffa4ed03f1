package host_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/kerneltest"
)

func TestPersonalPasswordAndProfile(t *testing.T) {
	k := kerneltest.Start(t, nil)
	addUser(t, k, "carol", "Carol#Pass1", 100000, false)
	tab1 := k.Login("carol", "Carol#Pass1")
	tab2 := k.Login("carol", "Carol#Pass1")
	if !tab1.MustChangePassword {
		t.Fatal("an admin-created account must change its password")
	}

	tests := []struct {
		name     string
		old, new string
		code     int
	}{
		{"wrong old password", "nope", "Better#Pass2", 40001},
		{"too weak", "Carol#Pass1", "short", 42019},
		{"no digit", "Carol#Pass1", "NoDigitsHere!", 42019},
		{"success", "Carol#Pass1", "Better#Pass2", 0},
	}
	for _, tt := range tests {
		r := k.Do("PUT", "/api/v1/personal/password", tab1.AccessToken, map[string]string{"oldPassword": tt.old, "newPassword": tt.new})
		r.Expect(t, tt.name, 200, tt.code)
		if tt.code == 42019 && r.Args["minLength"] == nil {
			t.Errorf("42019 without the policy in args: %s", r.Raw)
		}
	}
	k.Do("GET", "/api/v1/personal/profile", tab1.AccessToken, nil).Expect(t, "the changing session lives on", 200, 0)
	k.Do("GET", "/api/v1/personal/profile", tab2.AccessToken, nil).Expect(t, "the other session is revoked", 401, 40006)
	r := tryLogin(k, "carol", "Carol#Pass1")
	r.Expect(t, "old password after the change", 200, 40001)
	if tp := k.Login("carol", "Better#Pass2"); tp.MustChangePassword {
		t.Fatal("mustChangePassword still set after the change")
	}

	r = k.Do("PUT", "/api/v1/personal/profile", tab1.AccessToken, map[string]any{"name": "Carol C", "email": "c@example.com", "phone": "13800000001"})
	r.Expect(t, "a phone and e-mail change without a re-authentication window", 403, 40024)
	reauthPassword(k, tab1.AccessToken, "Better#Pass2").Expect(t, "re-auth", 200, 0)
	r = k.Do("PUT", "/api/v1/personal/profile", tab1.AccessToken, map[string]any{"name": "Carol C", "email": "c@example.com", "phone": "13800000001"})
	r.Expect(t, "update profile", 200, 0)
	r = k.Do("GET", "/api/v1/personal/profile", tab1.AccessToken, nil)
	var p struct {
		Name, Account string
		Email, Phone  *string
		Nickname      *string
	}
	if err := json.Unmarshal(r.Data, &p); err != nil || p.Name != "Carol C" || p.Email == nil || *p.Email != "c@example.com" || p.Account != "carol" {
		t.Fatalf("profile = %s", r.Data)
	}
	// Full replace: a missing field becomes null.
	k.Do("PUT", "/api/v1/personal/profile", tab1.AccessToken, map[string]any{"name": "Carol"}).Expect(t, "replace profile", 200, 0)
	u := k.Ent().SysUser.Query().Where(sysuser.Account("carol")).OnlyX(context.Background())
	if u.Email != nil || u.Phone != nil || u.Name != "Carol" {
		t.Fatalf("full replace left email=%v phone=%v name=%q", u.Email, u.Phone, u.Name)
	}
	k.Do("PUT", "/api/v1/personal/profile", tab1.AccessToken, map[string]any{"name": " "}).Expect(t, "blank name", 400, 48002)
	k.Do("PUT", "/api/v1/personal/profile", tab1.AccessToken, "{not json").Expect(t, "malformed body", 400, 48002)

	// Own sessions: list with isCurrent, end another one, 42024 for a foreign one.
	tab3 := k.Login("carol", "Better#Pass2")
	r = k.Do("GET", "/api/v1/personal/sessions", tab1.AccessToken, nil)
	var mine []struct {
		SessionID string `json:"sessionId"`
		IsCurrent bool   `json:"isCurrent"`
	}
	if err := json.Unmarshal(r.Data, &mine); err != nil || len(mine) < 2 {
		t.Fatalf("my sessions = %s", r.Data)
	}
	current := 0
	var other string
	for _, s := range mine {
		if s.IsCurrent {
			current++
		} else {
			other = s.SessionID
		}
	}
	if current != 1 {
		t.Fatalf("%d sessions marked current", current)
	}
	k.Do("DELETE", "/api/v1/personal/sessions/"+other, tab1.AccessToken, nil).Expect(t, "end another own session", 200, 0)
	k.Do("DELETE", "/api/v1/personal/sessions/unknown", tab1.AccessToken, nil).Expect(t, "end an unknown session", 200, 42024)
	_ = tab3
}

var smsCode = regexp.MustCompile(`code=(\d{6})`)

func TestSmsLogin(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	uid := addUser(t, k, "dave", "Dave#Pass12", 100000, false)
	k.Ent().SysUser.UpdateOneID(uid).SetPhone("13900000002").ExecX(ctx)

	send := func(phone string) kerneltest.Reply {
		return k.Do("POST", "/api/v1/auth/sms/send", "", map[string]string{"phone": phone})
	}
	send("13900000002").Expect(t, "send while SMS login is off", 200, 40012)
	if err := k.Settings().Set(ctx, "sys.security.smsLogin.enabled", "true"); err != nil {
		t.Fatal(err)
	}
	known, unknown := send("13900000002"), send("13900000009")
	known.Expect(t, "send to a known phone", 200, 0)
	unknown.Expect(t, "send to an unknown phone", 200, 0)
	if string(known.Data) != string(unknown.Data) {
		t.Fatalf("answers differ: %s vs %s", known.Data, unknown.Data)
	}
	send("13900000002").Expect(t, "resend too soon", 200, 40008)
	m := smsCode.FindAllStringSubmatch(k.Log(), -1)
	if len(m) != 1 {
		t.Fatalf("%d codes in the development log, want 1 (only the known phone)", len(m))
	}
	code := m[0][1]
	login := func(c string) kerneltest.Reply {
		return k.Do("POST", "/api/v1/auth/sms/login", "", map[string]string{"phone": "13900000002", "code": c})
	}
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	login(wrong).Expect(t, "wrong code", 200, 40011)
	r := login(code)
	r.Expect(t, "right code", 200, 0)
	var tp kerneltest.Tokens
	_ = json.Unmarshal(r.Data, &tp)
	k.Do("GET", "/api/v1/personal/profile", tp.AccessToken, nil).Expect(t, "profile after SMS login", 200, 0)
	login(code).Expect(t, "code reused", 200, 40011)
	if strings.Contains(k.Log(), "13900000002") {
		t.Error("the full phone number reached the log")
	}
}

func TestLoginLog(t *testing.T) {
	k, pw := kerneltest.Start(t, nil), kerneltest.AdminPassword
	tryLogin(k, "nobody", "wrong-password")
	admin := k.Login("superAdmin", pw)
	r := k.Do("GET", "/api/v1/sys/log/login/page?current=1&size=10&Account=", admin.AccessToken, nil)
	r.Expect(t, "login log page", 200, 0)
	var page struct {
		Total int `json:"total"`
		Items []struct {
			Account    string `json:"account"`
			Success    bool   `json:"success"`
			ResultCode int    `json:"resultCode"`
			Name       *string
		} `json:"items"`
	}
	if err := json.Unmarshal(r.Data, &page); err != nil || page.Total != 2 {
		t.Fatalf("login log = %s", r.Data)
	}
	if !page.Items[0].Success || page.Items[0].Account != "superAdmin" || page.Items[1].Success || page.Items[1].ResultCode != 40001 || page.Items[1].Account != "nobody" {
		t.Fatalf("rows (newest first) = %+v", page.Items)
	}
	if strings.Contains(r.Raw, pw) || strings.Contains(r.Raw, "wrong-password") {
		t.Fatal("a password reached the login log")
	}
	// every field of the contract's SysLoginLog and its base fields is present
	var raw struct {
		Items []map[string]json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(r.Data, &raw); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"id", "account", "success", "resultCode", "userId", "ip", "userAgent", "name", "isDelete", "createTime", "createUserId", "updateTime", "updateUserId"} {
		if _, ok := raw.Items[0][f]; !ok {
			t.Errorf("login log item lacks %q: %v", f, raw.Items[0])
		}
	}
	k.Do("GET", "/api/v1/sys/log/login/page?Success=false", admin.AccessToken, nil).Expect(t, "filter by success", 200, 0)
	k.Do("GET", "/api/v1/sys/log/login/page?Success=maybe", admin.AccessToken, nil).Expect(t, "bad filter", 400, 48002)
	k.Do("GET", "/api/v1/sys/log/login/page?Size=1000", admin.AccessToken, nil).Expect(t, "page too large", 200, 48001)
	k.Do("DELETE", "/api/v1/sys/log/login", admin.AccessToken, nil).Expect(t, "clear", 200, 0)
	r = k.Do("GET", "/api/v1/sys/log/login/page", admin.AccessToken, nil)
	if !strings.Contains(string(r.Data), `"total":0`) {
		t.Fatalf("after clearing: %s", r.Data)
	}
}
