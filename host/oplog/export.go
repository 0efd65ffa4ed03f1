package oplog

import (
	"context"
	"io"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysoplog"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/usernames"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/spreadsheet"
	"github.com/adminkernel/kernel/host/sysconfig"
)

type exportColumn struct {
	key, title string
	width      float64
	// preset marks the columns exported when none are named.
	preset bool
	value  func(r *ent.SysOpLog, operator any) any
}

func optional(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// exportColumns are the columns of the operation-log export (wire contract
// §4.9); the default profile leaves out ExceptionMessage.
var exportColumns = []exportColumn{
	{"Title", "操作", 24, true, func(r *ent.SysOpLog, _ any) any { t, _ := displayTitle(r.Title, "zh-CN"); return t }},
	{"HttpMethod", "请求方法", 10, true, func(r *ent.SysOpLog, _ any) any { return r.HTTPMethod }},
	{"Path", "请求路径", 36, true, func(r *ent.SysOpLog, _ any) any { return r.Path }},
	{"ResultCode", "结果码", 10, true, func(r *ent.SysOpLog, _ any) any { return r.ResultCode }},
	{"Success", "是否成功", 10, true, func(r *ent.SysOpLog, _ any) any {
		if r.Success {
			return "成功"
		}
		return "失败"
	}},
	{"OperatorName", "操作人", 14, true, func(_ *ent.SysOpLog, op any) any { return op }},
	{"Ip", "IP", 16, true, func(r *ent.SysOpLog, _ any) any { return optional(r.IP) }},
	{"ElapsedMs", "耗时(ms)", 10, true, func(r *ent.SysOpLog, _ any) any { return r.ElapsedMs }},
	{"CreateTime", "操作时间", 22, true, func(r *ent.SysOpLog, _ any) any { return request.EntityTime(r.CreateTime) }},
	{"ExceptionMessage", "异常信息", 40, false, func(r *ent.SysOpLog, _ any) any { return optional(r.ExceptionMessage) }},
}

// filtered is the operation-log query of the page's filters.
func filtered(client *ent.Client, f Filter) *ent.SysOpLogQuery {
	q := client.SysOpLog.Query()
	if f.Title != "" {
		if keys := titleKeysMatching(f.Title); len(keys) > 0 {
			q.Where(sysoplog.Or(sysoplog.TitleContains(f.Title), sysoplog.TitleIn(keys...)))
		} else {
			q.Where(sysoplog.TitleContains(f.Title))
		}
	}
	if f.Path != "" {
		q.Where(sysoplog.PathContains(f.Path))
	}
	if f.Success != nil {
		q.Where(sysoplog.Success(*f.Success))
	}
	if f.OperatorID != nil {
		q.Where(sysoplog.OperatorID(*f.OperatorID))
	}
	if f.StartTime != nil {
		q.Where(sysoplog.CreateTimeGTE(*f.StartTime))
	}
	if f.EndTime != nil {
		q.Where(sysoplog.CreateTimeLTE(*f.EndTime))
	}
	return q
}

// Export writes the operation-log rows of the page's filters, newest first,
// in the columns named (blank: the default profile; 46013 for an unknown
// one; 46012 above sys.export.maxRows). Rows are read in batches and
// streamed into the workbook.
func Export(ctx context.Context, client *ent.Client, settings *sysconfig.Service, f Filter, columns string) (write func(io.Writer) error, done func(), err error) {
	var cols []exportColumn
	if columns == "" {
		for _, c := range exportColumns {
			if c.preset {
				cols = append(cols, c)
			}
		}
	} else if cols, err = spreadsheet.Columns(columns, exportColumns, func(c exportColumn) string { return c.key }); err != nil {
		return nil, nil, err
	}
	max, err := settings.Int(ctx, spreadsheet.KeyExportMaxRows)
	if err != nil {
		return nil, nil, err
	}
	q := filtered(client, f)
	n, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, nil, err
	}
	if n > max {
		return nil, nil, errcode.New(errcode.ExportRowLimitExceeded).With("max", max).With("total", n)
	}
	titles := make([]string, len(cols))
	widths := make([]float64, len(cols))
	for i, c := range cols {
		titles[i], widths[i] = c.title, c.width
	}
	cells := make([]any, len(cols))
	next := func(last *ent.SysOpLog) ([]*ent.SysOpLog, error) {
		bq := q.Clone().Order(ent.Desc(sysoplog.FieldCreateTime), ent.Desc(sysoplog.FieldID)).Limit(spreadsheet.ExportBatch)
		if last != nil {
			bq.Where(sysoplog.Or(sysoplog.CreateTimeLT(last.CreateTime),
				sysoplog.And(sysoplog.CreateTimeEQ(last.CreateTime), sysoplog.IDLT(last.ID))))
		}
		return bq.All(ctx)
	}
	emit := func(rows []*ent.SysOpLog, put func([]any) error) error {
		var ids []int64
		for _, r := range rows {
			if r.OperatorID != nil {
				ids = append(ids, *r.OperatorID)
			}
		}
		names, err := usernames.Of(ctx, client, ids)
		if err != nil {
			return err
		}
		for _, r := range rows {
			var op any
			if r.OperatorID != nil {
				if n, ok := names[*r.OperatorID]; ok {
					op = n
				}
			}
			for i, c := range cols {
				cells[i] = c.value(r, op)
			}
			if err := put(cells); err != nil {
				return err
			}
		}
		return nil
	}
	return spreadsheet.Export(titles, widths, next, emit)
}

// export serves GET /sys/log/op/export.
func (l logs) export(c fiber.Ctx) error {
	f, err := readOpFilter(c)
	if err != nil {
		return err
	}
	write, done, err := Export(c.Context(), l.client, l.settings, f, request.Query(c, "columns"))
	if err != nil {
		return err
	}
	return spreadsheet.Send(c, "op-log.xlsx", write, done)
}
