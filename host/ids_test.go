package host_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/snowflake"
)

// Two kernels in one process each issue ids of their own worker id: the
// generator is the kernel's, not the process's. Rows are created through
// both, interleaved: by the create hook (users, login log, sessions) and
// by the session service (the token of a refresh).
func TestKernelsKeepTheirOwnWorkerIDs(t *testing.T) {
	workers := []int{3, 4}
	kernels := make([]*kerneltest.Kernel, len(workers))
	for i, w := range workers {
		kernels[i] = kerneltest.Start(t, []string{"Service__Snowflake__WorkerId=" + strconv.Itoa(w)})
	}
	for round := range 2 {
		for _, k := range kernels {
			tp := k.Login("superAdmin", kerneltest.AdminPassword)
			k.Do("POST", "/api/v1/auth/refresh", "", map[string]string{"refreshToken": tp.RefreshToken}).Expect(t, "refresh", 200, 0)
			k.User("eve"+strconv.Itoa(round), "Eve#Pass123")
		}
	}
	ctx := context.Background()
	for i, k := range kernels {
		c := k.Ent()
		var ids []int64
		for _, u := range c.SysUser.Query().AllX(ctx) {
			ids = append(ids, u.ID)
		}
		for _, l := range c.SysLoginLog.Query().AllX(ctx) {
			ids = append(ids, l.ID)
		}
		for _, s := range c.SysSession.Query().AllX(ctx) {
			ids = append(ids, s.ID)
		}
		tokens := c.SysSessionToken.Query().AllX(ctx)
		if len(tokens) < 4 {
			t.Fatalf("kernel %d: %d session tokens, want at least 4 (two logins, two refreshes)", i, len(tokens))
		}
		for _, tk := range tokens {
			ids = append(ids, tk.ID)
		}
		generated := 0
		for _, id := range ids {
			if id < snowflake.MinID { // seed rows
				continue
			}
			generated++
			if _, w, _ := snowflake.Parts(id); w != workers[i] {
				t.Errorf("kernel %d: id %d carries worker %d, want %d", i, id, w, workers[i])
			}
		}
		if generated < 10 {
			t.Fatalf("kernel %d: only %d generated ids", i, generated)
		}
	}
}
