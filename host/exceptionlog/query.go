package exceptionlog

import (
	"context"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysexceptionlog"
	"github.com/adminkernel/kernel/host/internal/usernames"
	"github.com/adminkernel/kernel/host/request"
)

// Item is the contract's SysExceptionLog.
type Item struct {
	ID            int64   `json:"id"`
	HTTPMethod    string  `json:"httpMethod"`
	Path          string  `json:"path"`
	TraceID       *string `json:"traceId"`
	ExceptionType string  `json:"exceptionType"`
	Message       *string `json:"message"`
	StackTrace    *string `json:"stackTrace"`
	OperatorID    *int64  `json:"operatorId"`
	OperatorName  *string `json:"operatorName"`
	IP            *string `json:"ip"`
	UserAgent     *string `json:"userAgent"`
	RequestID     *string `json:"requestId"`
	request.Audit
}

// Filter filters the exception-log page: Path and ExceptionType match as
// substrings, the times are inclusive bounds of create_time.
type Filter struct {
	Path, ExceptionType string
	StartTime, EndTime  *time.Time
}

// sortable maps the contract's sort field names (compared
// case-insensitively) to columns.
var sortable = map[string]string{
	"id":            sysexceptionlog.FieldID,
	"createtime":    sysexceptionlog.FieldCreateTime,
	"httpmethod":    sysexceptionlog.FieldHTTPMethod,
	"path":          sysexceptionlog.FieldPath,
	"exceptiontype": sysexceptionlog.FieldExceptionType,
	"operatorid":    sysexceptionlog.FieldOperatorID,
	"ip":            sysexceptionlog.FieldIP,
}

// Page lists exception-log rows, newest first unless p.SortField names a
// column, with the operator's name joined in.
func Page(ctx context.Context, client *ent.Client, f Filter, p request.Page) ([]Item, int, error) {
	q := client.SysExceptionLog.Query()
	if f.Path != "" {
		q.Where(sysexceptionlog.PathContains(f.Path))
	}
	if f.ExceptionType != "" {
		q.Where(sysexceptionlog.ExceptionTypeContains(f.ExceptionType))
	}
	if f.StartTime != nil {
		q.Where(sysexceptionlog.CreateTimeGTE(*f.StartTime))
	}
	if f.EndTime != nil {
		q.Where(sysexceptionlog.CreateTimeLTE(*f.EndTime))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	order := request.Order(p, sortable, "", sysexceptionlog.OrderOption(ent.Desc(sysexceptionlog.FieldCreateTime, sysexceptionlog.FieldID)))
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
		items[i] = Item{
			ID: r.ID, HTTPMethod: r.HTTPMethod, Path: r.Path, TraceID: r.TraceID,
			ExceptionType: r.ExceptionType, Message: r.Message, StackTrace: r.StackTrace,
			OperatorID: r.OperatorID, IP: r.IP, UserAgent: r.UserAgent, RequestID: r.RequestID,
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

// Clear hard-deletes every exception-log row and returns how many there
// were.
func Clear(ctx context.Context, client *ent.Client) (int, error) {
	return client.SysExceptionLog.Delete().Exec(ctx)
}
