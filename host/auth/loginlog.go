package auth

import (
	"context"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysloginlog"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/internal/outage"
	"github.com/adminkernel/kernel/host/internal/textclip"
	"github.com/adminkernel/kernel/host/internal/usernames"
	"github.com/adminkernel/kernel/host/logging"
	"github.com/adminkernel/kernel/host/request"
)

// WriteLoginLog records one attempt of any login method (external login
// uses it with the provider code as method): the raw account (cut to the column),
// the outcome and the client, never a password or token. A write failure is
// logged and never changes the login's answer.
func (s *Service) WriteLoginLog(ctx context.Context, account, method string, userID *int64, result error, cl Client) {
	// The code the caller was answered with (envelope.CodeOf: business
	// codes, 50001 for a full disk, 50002/50003 for an unreachable Redis or
	// database, 50000 for anything else).
	code := int(envelope.CodeOf(result))
	s.d.Metrics.Login(method, code)
	c := s.d.Client.SysLoginLog.Create().
		SetAccount(textclip.Runes(account, loginLogAccountLen)).
		SetSuccess(result == nil).
		SetResultCode(code).
		SetNillableUserID(userID).
		SetLoginMethod(method)
	if cl.IP != "" {
		c.SetIP(textclip.Runes(cl.IP, 64))
	}
	if cl.UserAgent != "" {
		c.SetUserAgent(textclip.Runes(cl.UserAgent, userAgentColumnLen))
	}
	if err := c.Exec(context.WithoutCancel(ctx)); err != nil {
		if _, down := outage.As(err); down {
			return // the database outage is logged once, by its tracker
		}
		logging.Ctx(ctx, s.d.Log).Warn("writing the login log failed", "error", err)
	}
}

// LoginLogItem is the contract's SysLoginLog.
type LoginLogItem struct {
	ID          int64   `json:"id"`
	Account     string  `json:"account"`
	Success     bool    `json:"success"`
	ResultCode  int     `json:"resultCode"`
	UserID      *int64  `json:"userId"`
	LoginMethod *string `json:"loginMethod"`
	IP          *string `json:"ip"`
	UserAgent   *string `json:"userAgent"`
	Name        *string `json:"name"`
	IsDelete    bool    `json:"isDelete"`
	CreateTime  string  `json:"createTime"`
	// The base fields of the contract: a log row is never updated, so
	// updateTime and updateUserId are always null (as on the other logs).
	CreateUserID *int64  `json:"createUserId"`
	UpdateTime   *string `json:"updateTime"`
	UpdateUserID *int64  `json:"updateUserId"`
}

// LoginLogFilter filters the login-log page.
type LoginLogFilter struct {
	Account            string
	Success            *bool
	StartTime, EndTime *time.Time
}

// LoginLogPage lists login-log rows, newest first.
func (s *Service) LoginLogPage(ctx context.Context, f LoginLogFilter, p request.Page) ([]LoginLogItem, int, error) {
	q := s.d.Client.SysLoginLog.Query()
	if f.Account != "" {
		q.Where(sysloginlog.AccountContains(f.Account))
	}
	if f.Success != nil {
		q.Where(sysloginlog.Success(*f.Success))
	}
	if f.StartTime != nil {
		q.Where(sysloginlog.CreateTimeGTE(*f.StartTime))
	}
	if f.EndTime != nil {
		q.Where(sysloginlog.CreateTimeLTE(*f.EndTime))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	rows, err := q.Order(ent.Desc(sysloginlog.FieldCreateTime), ent.Desc(sysloginlog.FieldID)).
		Offset(p.Offset()).Limit(p.Size).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	names, err := s.userNames(ctx, rows)
	if err != nil {
		return nil, 0, err
	}
	items := make([]LoginLogItem, len(rows))
	for i, r := range rows {
		items[i] = LoginLogItem{
			ID: r.ID, Account: r.Account, Success: r.Success, ResultCode: r.ResultCode,
			UserID: r.UserID, LoginMethod: r.LoginMethod, IP: r.IP, UserAgent: r.UserAgent,
			CreateTime: request.EntityTime(r.CreateTime), CreateUserID: r.CreateUserID,
		}
		if r.UserID != nil {
			if n, ok := names[*r.UserID]; ok {
				items[i].Name = &n
			}
		}
	}
	return items, total, nil
}

func (s *Service) userNames(ctx context.Context, rows []*ent.SysLoginLog) (map[int64]string, error) {
	var ids []int64
	for _, r := range rows {
		if r.UserID != nil {
			ids = append(ids, *r.UserID)
		}
	}
	return usernames.Of(ctx, s.d.Client, ids)
}

// ClearLoginLog hard-deletes every login-log row.
func (s *Service) ClearLoginLog(ctx context.Context) error {
	_, err := s.d.Client.SysLoginLog.Delete().Exec(ctx)
	return err
}
