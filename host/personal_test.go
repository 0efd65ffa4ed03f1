package host_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host"
)

func TestPersonalPasswordAndProfile(t *testing.T) {
	a, _ := authKernel(t)
	addUser(t, a, "carol", "Carol#Pass1", 100000, false)
	tab1 := a.mustLogin("carol", "Carol#Pass1")
	tab2 := a.mustLogin("carol", "Carol#Pass1")
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
		r := a.do("PUT", "/api/v1/personal/password", tab1.AccessToken, map[string]string{"oldPassword": tt.old, "newPassword": tt.new})
		expect(t, tt.name, r, 200, tt.code)
		if tt.code == 42019 && r.Args["minLength"] == nil {
			t.Errorf("42019 without the policy in args: %s", r.Raw)
		}
	}
	expect(t, "the changing session lives on", a.do("GET", "/api/v1/personal/profile", tab1.AccessToken, nil), 200, 0)
	expect(t, "the other session is revoked", a.do("GET", "/api/v1/personal/profile", tab2.AccessToken, nil), 401, 40006)
	_, r := a.login("carol", "Carol#Pass1")
	expect(t, "old password after the change", r, 200, 40001)
	if tp := a.mustLogin("carol", "Better#Pass2"); tp.MustChangePassword {
		t.Fatal("mustChangePassword still set after the change")
	}

	r = a.do("PUT", "/api/v1/personal/profile", tab1.AccessToken, map[string]any{"name": "Carol C", "email": "c@example.com", "phone": "13800000001"})
	expect(t, "update profile", r, 200, 0)
	r = a.do("GET", "/api/v1/personal/profile", tab1.AccessToken, nil)
	var p struct {
		Name, Account string
		Email, Phone  *string
		Nickname      *string
	}
	if err := json.Unmarshal(r.Data, &p); err != nil || p.Name != "Carol C" || p.Email == nil || *p.Email != "c@example.com" || p.Account != "carol" {
		t.Fatalf("profile = %s", r.Data)
	}
	// Full replace: a missing field becomes null.
	expect(t, "replace profile", a.do("PUT", "/api/v1/personal/profile", tab1.AccessToken, map[string]any{"name": "Carol"}), 200, 0)
	u := a.k.Ent().SysUser.Query().Where(sysuser.Account("carol")).OnlyX(context.Background())
	if u.Email != nil || u.Phone != nil || u.Name != "Carol" {
		t.Fatalf("full replace left email=%v phone=%v name=%q", u.Email, u.Phone, u.Name)
	}
	expect(t, "blank name", a.do("PUT", "/api/v1/personal/profile", tab1.AccessToken, map[string]any{"name": " "}), 400, 48002)
	expect(t, "malformed body", a.do("PUT", "/api/v1/personal/profile", tab1.AccessToken, "{not json"), 400, 48002)

	// Own sessions: list with isCurrent, end another one, 42024 for a foreign one.
	tab3 := a.mustLogin("carol", "Better#Pass2")
	r = a.do("GET", "/api/v1/personal/sessions", tab1.AccessToken, nil)
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
	expect(t, "end another own session", a.do("DELETE", "/api/v1/personal/sessions/"+other, tab1.AccessToken, nil), 200, 0)
	expect(t, "end an unknown session", a.do("DELETE", "/api/v1/personal/sessions/unknown", tab1.AccessToken, nil), 200, 42024)
	_ = tab3
}

var smsCode = regexp.MustCompile(`code=(\d{6})`)

func TestSmsLogin(t *testing.T) {
	logs := &syncBuffer{}
	cfg := load(t, t.TempDir(), config.Development, "Service__Seed__AdminPassword=Adm1n#Passw0rd", "Service__Security__Password__Pbkdf2Iterations=100000")
	k, err := host.New(context.Background(), host.Options{Config: cfg, LogOutput: logs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	a := api{t: t, k: k}
	ctx := context.Background()
	uid := addUser(t, a, "dave", "Dave#Pass12", 100000, false)
	a.k.Ent().SysUser.UpdateOneID(uid).SetPhone("13900000002").ExecX(ctx)

	send := func(phone string) reply {
		return a.do("POST", "/api/v1/auth/sms/send", "", map[string]string{"phone": phone})
	}
	expect(t, "send while SMS login is off", send("13900000002"), 200, 40012)
	if err := k.Settings().Set(ctx, "sys.security.smsLogin.enabled", "true"); err != nil {
		t.Fatal(err)
	}
	known, unknown := send("13900000002"), send("13900000009")
	expect(t, "send to a known phone", known, 200, 0)
	expect(t, "send to an unknown phone", unknown, 200, 0)
	if string(known.Data) != string(unknown.Data) {
		t.Fatalf("answers differ: %s vs %s", known.Data, unknown.Data)
	}
	expect(t, "resend too soon", send("13900000002"), 200, 40008)
	m := smsCode.FindAllStringSubmatch(logs.String(), -1)
	if len(m) != 1 {
		t.Fatalf("%d codes in the development log, want 1 (only the known phone)", len(m))
	}
	code := m[0][1]
	login := func(c string) reply {
		return a.do("POST", "/api/v1/auth/sms/login", "", map[string]string{"phone": "13900000002", "code": c})
	}
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	expect(t, "wrong code", login(wrong), 200, 40011)
	r := login(code)
	expect(t, "right code", r, 200, 0)
	var tp tokenPair
	_ = json.Unmarshal(r.Data, &tp)
	expect(t, "profile after SMS login", a.do("GET", "/api/v1/personal/profile", tp.AccessToken, nil), 200, 0)
	expect(t, "code reused", login(code), 200, 40011)
	if strings.Contains(logs.String(), "13900000002") {
		t.Error("the full phone number reached the log")
	}
}

func TestLoginLog(t *testing.T) {
	a, pw := authKernel(t)
	a.login("nobody", "wrong-password")
	admin := a.mustLogin("superAdmin", pw)
	r := a.do("GET", "/api/v1/sys/log/login/page?current=1&size=10&Account=", admin.AccessToken, nil)
	expect(t, "login log page", r, 200, 0)
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
	expect(t, "filter by success", a.do("GET", "/api/v1/sys/log/login/page?Success=false", admin.AccessToken, nil), 200, 0)
	expect(t, "bad filter", a.do("GET", "/api/v1/sys/log/login/page?Success=maybe", admin.AccessToken, nil), 400, 48002)
	expect(t, "page too large", a.do("GET", "/api/v1/sys/log/login/page?Size=1000", admin.AccessToken, nil), 200, 48001)
	expect(t, "clear", a.do("DELETE", "/api/v1/sys/log/login", admin.AccessToken, nil), 200, 0)
	r = a.do("GET", "/api/v1/sys/log/login/page", admin.AccessToken, nil)
	if !strings.Contains(string(r.Data), `"total":0`) {
		t.Fatalf("after clearing: %s", r.Data)
	}
}
