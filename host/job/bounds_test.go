//go:build !unit

package job_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/job"
)

// systemJob is the seeded log cleanup job as an update body.
func systemJob(kv ...any) map[string]any {
	return with(map[string]any{
		"code": job.SystemJobCode, "name": "任务日志清理", "handlerKind": job.HandlerCompiled, "handlerName": job.HandlerLogRetention,
		"triggerKind": job.TriggerCron, "cronExpression": job.SystemJobCron,
		"misfireStrategy": job.MisfireFireOnceNow, "concurrencyMode": job.ConcurrencySerialSkip, "timeoutSeconds": 3600,
	}, kv...)
}

// TestSystemJobBounds: a scoped (not super) administrator holding the job
// codes cannot set the log cleanup below the retention floor nor out of
// the system job's bounds; the floor is the super-admin's to change; and
// the cleanup itself never deletes logs younger than the floor, whatever
// the setting says.
func TestSystemJobBounds(t *testing.T) {
	k, admin := startKernel(t)
	ctx := context.Background()
	const pw = "Scoped#Passw0rd1"
	k.User("jobadmin", pw, "GET:/api/v1/sys/job/page", "PUT:/api/v1/sys/job/{id}", "POST:/api/v1/sys/job/{id}/run",
		"GET:/api/v1/sys/job/log/page", "PUT:/api/v1/sys/config/batch", "PUT:/api/v1/sys/config/{id}", "DELETE:/api/v1/sys/config/{id}")
	tok := k.Login("jobadmin", pw).AccessToken
	path := fmt.Sprintf("%s/%d", base, job.SystemJobID)

	// The attack of the finding: days=1 wipes the logs.
	k.Do("PUT", path, tok, systemJob("handlerParam", `{"days":1}`)).ExpectCode(t, "days below the floor", errcode.JobRetentionBelowFloor)
	k.Do("PUT", path, tok, systemJob("handlerParam", `{"days":29}`)).ExpectCode(t, "days just below the floor", errcode.JobRetentionBelowFloor)
	for _, c := range []struct {
		what string
		body map[string]any
	}{
		{"a bad parameter", systemJob("handlerParam", `{"days":"x"}`)},
		{"every second", systemJob("cronExpression", "* * * * * ?")},
		{"every minute", systemJob("cronExpression", "0 * * * * ?")},
		{"once in 2099", systemJob("cronExpression", "0 0 0 1 1 ?")},
		{"a short interval", systemJob("triggerKind", job.TriggerInterval, "cronExpression", nil, "intervalSeconds", 60)},
		{"one shot", systemJob("triggerKind", job.TriggerOneShot, "cronExpression", nil, "runAt", time.Now().Add(time.Hour).Format(time.RFC3339))},
		{"an end time", systemJob("endTime", time.Now().Add(48*time.Hour).Format(time.RFC3339))},
		{"a start time", systemJob("startTime", time.Now().Add(48*time.Hour).Format(time.RFC3339))},
		{"a one-second timeout", systemJob("timeoutSeconds", 1)},
	} {
		k.Do("PUT", path, tok, c.body).ExpectCode(t, c.what, errcode.JobSystemBounds)
	}
	// Within the bounds it is editable.
	k.Do("PUT", path, tok, systemJob("handlerParam", `{"days":45}`, "cronExpression", "0 0 4 * * ?")).Expect(t, "days 45 at 04:00", 200, 0)
	k.Do("PUT", path, tok, systemJob("triggerKind", job.TriggerInterval, "cronExpression", nil, "intervalSeconds", 86400)).Expect(t, "daily interval", 200, 0)
	// The super-admin is held to the floor too...
	k.Do("PUT", path, admin, systemJob("handlerParam", `{"days":1}`)).ExpectCode(t, "days 1 (super-admin)", errcode.JobRetentionBelowFloor)

	// ...which only the super-admin lowers.
	floor := "1"
	k.Do("PUT", "/api/v1/sys/config/batch", tok, []map[string]any{{"configKey": job.KeyLogRetentionFloorDays, "configValue": floor}}).
		ExpectCode(t, "the floor by a scoped admin", errcode.SuperAdminRequired)
	row := k.Ent().SysConfig.Query().AllX(ctx)
	for _, r := range row {
		if r.ConfigKey == job.KeyLogRetentionFloorDays {
			k.Do("PUT", fmt.Sprintf("/api/v1/sys/config/%d", r.ID), tok, map[string]any{"name": "x", "configValue": floor}).
				ExpectCode(t, "the floor row by a scoped admin", errcode.SuperAdminRequired)
			k.Do("DELETE", fmt.Sprintf("/api/v1/sys/config/%d", r.ID), tok, nil).
				ExpectCode(t, "delete the floor row by a scoped admin", errcode.SuperAdminRequired)
		}
	}

	// The retention setting itself is refused below the floor, by anyone
	// and on every write path (43012 naming the floor).
	for _, who := range []struct {
		name, tok string
	}{{"scoped admin", tok}, {"super-admin", admin}} {
		k.Do("PUT", "/api/v1/sys/config/batch", who.tok, []map[string]any{{"configKey": job.KeyLogRetentionDays, "configValue": "29"}}).
			ExpectCode(t, "retention 29 under a floor of 30 by the "+who.name, errcode.ConfigValueInvalid)
	}
	for _, r := range k.Ent().SysConfig.Query().AllX(ctx) {
		if r.ConfigKey == job.KeyLogRetentionDays {
			k.Do("PUT", fmt.Sprintf("/api/v1/sys/config/%d", r.ID), admin, map[string]any{"name": "x", "configValue": "2"}).
				ExpectCode(t, "the retention row at 2", errcode.ConfigValueInvalid)
		}
	}
	k.Do("PUT", "/api/v1/sys/config/batch", tok, []map[string]any{{"configKey": job.KeyLogRetentionDays, "configValue": "30"}}).
		Expect(t, "retention at the floor", 200, 0)
	k.Do("PUT", "/api/v1/sys/config/batch", admin, []map[string]any{
		{"configKey": job.KeyLogRetentionDays, "configValue": "7"}, {"configKey": job.KeyLogRetentionFloorDays, "configValue": "8"},
	}).ExpectCode(t, "retention 7 with a floor of 8 in one batch", errcode.ConfigValueInvalid)

	// The cleanup never goes below the floor: a value of 1 day written
	// around the config center (the host's settings) keeps a log of 5 days.
	k.Do("PUT", path, admin, systemJob()).Expect(t, "reset", 200, 0)
	if err := k.Settings().Set(ctx, job.KeyLogRetentionDays, "1"); err != nil {
		t.Fatal(err)
	}
	old := k.Ent().SysOpLog.Create().SetTitle("five days old").SetHTTPMethod("POST").SetPath("/x").SetSuccess(true).
		SetCreateTime(time.Now().AddDate(0, 0, -5)).SaveX(ctx).ID
	ancient := k.Ent().SysOpLog.Create().SetTitle("forty days old").SetHTTPMethod("POST").SetPath("/x").SetSuccess(true).
		SetCreateTime(time.Now().AddDate(0, 0, -40)).SaveX(ctx).ID
	logID := runNow(t, k, tok, path+"/run", "run the cleanup")
	waitRun(t, k, tok, logID, job.RunSuccess, 10*time.Second)
	if _, err := k.Ent().SysOpLog.Get(ctx, old); err != nil {
		t.Fatal("the 5-day-old operation log row was deleted below the floor")
	}
	if _, err := k.Ent().SysOpLog.Get(ctx, ancient); err == nil {
		t.Fatal("the 40-day-old row outlived the cleanup")
	}

	// The super-admin lowers the floor: then days=1 is accepted.
	k.Do("PUT", "/api/v1/sys/config/batch", admin, []map[string]any{{"configKey": job.KeyLogRetentionFloorDays, "configValue": floor}}).
		Expect(t, "the floor by the super-admin", 200, 0)
	k.Do("PUT", path, tok, systemJob("handlerParam", `{"days":1}`)).Expect(t, "days 1 under a floor of 1", 200, 0)
	k.Do("PUT", "/api/v1/sys/config/batch", tok, []map[string]any{{"configKey": job.KeyLogRetentionDays, "configValue": "1"}}).
		Expect(t, "retention 1 under a floor of 1", 200, 0)
}
