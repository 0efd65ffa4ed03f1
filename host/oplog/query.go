package oplog

import (
	"context"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysoplog"
	"github.com/adminkernel/kernel/host/internal/usernames"
	"github.com/adminkernel/kernel/host/request"
)

// Item is the contract's SysOpLog.
type Item struct {
	ID               int64   `json:"id"`
	Title            string  `json:"title"`
	TitleKey         *string `json:"titleKey,omitempty"`
	HTTPMethod       string  `json:"httpMethod"`
	Path             string  `json:"path"`
	ParamJSON        *string `json:"paramJson"`
	ResultCode       int     `json:"resultCode"`
	Success          bool    `json:"success"`
	ExceptionMessage *string `json:"exceptionMessage"`
	ElapsedMs        int64   `json:"elapsedMs"`
	OperatorID       *int64  `json:"operatorId"`
	OperatorName     *string `json:"operatorName"`
	IP               *string `json:"ip"`
	UserAgent        *string `json:"userAgent"`
	RequestID        *string `json:"requestId"`
	TraceID          *string `json:"traceId"`
	request.Audit
}

// Filter filters the operation-log page: Title and Path match as
// substrings (Title also the texts of title keys, in either language), the
// times are inclusive bounds of create_time. Lang is the language pack the
// titles are answered in (request.Language).
type Filter struct {
	Title, Path        string
	Lang               string
	Success            *bool
	OperatorID         *int64
	StartTime, EndTime *time.Time
}

// sortable maps the contract's sort field names (compared
// case-insensitively) to columns.
var sortable = map[string]string{
	"id":         sysoplog.FieldID,
	"createtime": sysoplog.FieldCreateTime,
	"title":      sysoplog.FieldTitle,
	"httpmethod": sysoplog.FieldHTTPMethod,
	"path":       sysoplog.FieldPath,
	"resultcode": sysoplog.FieldResultCode,
	"success":    sysoplog.FieldSuccess,
	"elapsedms":  sysoplog.FieldElapsedMs,
	"operatorid": sysoplog.FieldOperatorID,
	"ip":         sysoplog.FieldIP,
}

// Page lists operation-log rows, newest first unless p.SortField names a
// column, with the operator's name joined in.
func Page(ctx context.Context, client *ent.Client, f Filter, p request.Page) ([]Item, int, error) {
	q := filtered(client, f)
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	order := request.Order(p, sortable, "", sysoplog.OrderOption(ent.Desc(sysoplog.FieldCreateTime, sysoplog.FieldID)))
	rows, err := q.Order(order...).Offset(p.Offset()).Limit(p.Size).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	var ids []int64
	for _, r := range rows {
		if r.OperatorID != nil {
			ids = append(ids, *r.OperatorID)
		}
	}
	names, err := usernames.Of(ctx, client, ids)
	if err != nil {
		return nil, 0, err
	}
	items := make([]Item, len(rows))
	for i, r := range rows {
		title, key := displayTitle(r.Title, f.Lang)
		items[i] = Item{
			ID: r.ID, Title: title, TitleKey: key, HTTPMethod: r.HTTPMethod, Path: r.Path,
			ParamJSON: r.ParamJSON, ResultCode: r.ResultCode, Success: r.Success,
			ExceptionMessage: r.ExceptionMessage, ElapsedMs: r.ElapsedMs,
			OperatorID: r.OperatorID, IP: r.IP, UserAgent: r.UserAgent, RequestID: r.RequestID, TraceID: r.TraceID,
			Audit: request.Audit{CreateTime: request.EntityTime(r.CreateTime), CreateUserID: r.CreateUserID},
		}
		if r.OperatorID != nil {
			if n, ok := names[*r.OperatorID]; ok {
				items[i].OperatorName = &n
			}
		}
	}
	return items, total, nil
}

// Clear hard-deletes every operation-log row and returns how many there
// were.
func Clear(ctx context.Context, client *ent.Client) (int, error) {
	return client.SysOpLog.Delete().Exec(ctx)
}
