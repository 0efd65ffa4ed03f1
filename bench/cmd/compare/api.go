package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// api talks to a running kernel.
type api struct {
	base   string
	client *http.Client
}

func newAPI(base string) *api {
	return &api{base: base, client: &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

type reply struct {
	Status int
	Header http.Header
	Code   int             `json:"code"`
	MsgKey string          `json:"msgKey"`
	Data   json.RawMessage `json:"data"`
	Raw    string
}

// do sends a JSON request and decodes the envelope; a non-200 answer or a
// non-zero code is an error.
func (a *api) do(ctx context.Context, method, path, token string, body any) (reply, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return reply{}, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return r, nil
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("%s %s: HTTP %d, not an envelope: %.200s", method, path, resp.StatusCode, raw)
	}
	if resp.StatusCode != http.StatusOK || r.Code != 0 {
		return r, fmt.Errorf("%s %s: HTTP %d code %d: %.300s", method, path, resp.StatusCode, r.Code, raw)
	}
	return r, nil
}

// login returns an access token.
func (a *api) login(ctx context.Context, account, pw string) (string, error) {
	r, err := a.do(ctx, http.MethodPost, "/api/v1/auth/login", "", map[string]string{"account": account, "password": pw})
	if err != nil {
		return "", err
	}
	var out struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.Unmarshal(r.Data, &out); err != nil || out.AccessToken == "" {
		return "", fmt.Errorf("login %s: no access token in %.200s", account, r.Raw)
	}
	return out.AccessToken, nil
}

// setConfig saves runtime settings through the config center.
func (a *api) setConfig(ctx context.Context, token string, kv ...string) error {
	var items []map[string]string
	for i := 0; i+1 < len(kv); i += 2 {
		items = append(items, map[string]string{"configKey": kv[i], "configValue": kv[i+1]})
	}
	_, err := a.do(ctx, http.MethodPut, "/api/v1/sys/config/batch", token, items)
	return err
}

// menuIDs returns the id of every menu of the tree.
func (a *api) menuIDs(ctx context.Context, token string) ([]int64, error) {
	r, err := a.do(ctx, http.MethodGet, "/api/v1/sys/menu/tree", token, nil)
	if err != nil {
		return nil, err
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(r.Data))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	var ids []int64
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if n, ok := x["id"]; ok {
				var id int64
				switch t := n.(type) {
				case json.Number:
					id, _ = t.Int64()
				case string:
					_, _ = fmt.Sscan(t, &id)
				}
				if id > 0 {
					ids = append(ids, id)
				}
			}
			for k, e := range x {
				if k != "id" {
					walk(e)
				}
			}
		}
	}
	walk(tree)
	return ids, nil
}

// createPermissionUser grants every menu to the seeded template role 1 and
// creates a non-super-admin account holding it: its requests take the full
// permission path (the super-admin's token skips the lookup).
func (a *api) createPermissionUser(ctx context.Context, adminToken, account, pw string) error {
	ids, err := a.menuIDs(ctx, adminToken)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return fmt.Errorf("the menu tree is empty")
	}
	if _, err := a.do(ctx, http.MethodPut, "/api/v1/sys/role/menu", adminToken, map[string]any{"roleId": 1, "menuIds": ids}); err != nil {
		return fmt.Errorf("granting the menus to role 1: %w", err)
	}
	_, err = a.do(ctx, http.MethodPost, "/api/v1/sys/user", adminToken, map[string]any{
		"account": account, "password": pw, "name": "Bench User", "orgId": 1, "roleIds": []int64{1},
	})
	if err != nil {
		if strings.Contains(err.Error(), "code 42006") { // AccountExists: a restart on the same database
			return nil
		}
		return fmt.Errorf("creating %s: %w", account, err)
	}
	// An account an administrator created must change its password before
	// anything but the change answers (40028): change it and change it back,
	// so the benchmarks measure an ordinary session with the password they
	// know.
	for _, step := range [][2]string{{pw, pw + "#Bench1"}, {pw + "#Bench1", pw}} {
		tok, err := a.login(ctx, account, step[0])
		if err != nil {
			return fmt.Errorf("logging in as %s to change the initial password: %w", account, err)
		}
		if _, err := a.do(ctx, http.MethodPut, "/api/v1/personal/password", tok, map[string]string{"oldPassword": step[0], "newPassword": step[1]}); err != nil {
			return fmt.Errorf("changing the initial password of %s: %w", account, err)
		}
	}
	return nil
}

// providers lists the codes of the external-login providers.
func (a *api) providers(ctx context.Context) ([]string, error) {
	r, err := a.do(ctx, http.MethodGet, "/api/v1/auth/external/providers", "", nil)
	if err != nil {
		return nil, err
	}
	var items []struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal(r.Data, &items); err != nil {
		return nil, fmt.Errorf("providers: %.200s", r.Raw)
	}
	var codes []string
	for _, it := range items {
		codes = append(codes, it.Code)
	}
	return codes, nil
}
