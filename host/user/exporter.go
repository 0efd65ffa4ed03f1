package user

import (
	"context"
	"io"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/spreadsheet"
)

// exportColumn is a column of the user export (wire contract §4.1).
type exportColumn struct {
	key, title string
	width      float64
	value      func(it Item, gender map[string]string) any
}

func str(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func yesNo(b bool) any {
	if b {
		return "是"
	}
	return "否"
}

var exportColumns = []exportColumn{
	{"Account", "账号", 18, func(it Item, _ map[string]string) any { return it.Account }},
	{"Name", "姓名", 14, func(it Item, _ map[string]string) any { return it.Name }},
	{"Nickname", "昵称", 14, func(it Item, _ map[string]string) any { return str(it.Nickname) }},
	{"Phone", "手机号", 16, func(it Item, _ map[string]string) any { return str(it.Phone) }},
	{"Email", "邮箱", 24, func(it Item, _ map[string]string) any { return str(it.Email) }},
	{"Gender", "性别", 8, func(it Item, g map[string]string) any {
		if it.Gender == nil {
			return nil
		}
		if l, ok := g[*it.Gender]; ok {
			return l
		}
		return *it.Gender
	}},
	{"OrgName", "机构", 18, func(it Item, _ map[string]string) any { return str(it.OrgName) }},
	{"PositionName", "岗位", 14, func(it Item, _ map[string]string) any { return str(it.PositionName) }},
	{"DirectorName", "直属上级", 14, func(it Item, _ map[string]string) any { return str(it.DirectorName) }},
	{"Enabled", "状态", 8, func(it Item, _ map[string]string) any {
		if it.Enabled {
			return "启用"
		}
		return "停用"
	}},
	{"IsSuperAdmin", "超级管理员", 10, func(it Item, _ map[string]string) any { return yesNo(it.IsSuperAdmin) }},
	{"CreateTime", "创建时间", 22, func(it Item, _ map[string]string) any { return it.CreateTime }},
}

// Export writes the users of the page's filters and the caller's data
// scope, newest first (the page's default order), in the columns named
// (46013 for an unknown one). More rows than sys.export.maxRows answer
// 46012. The rows are read in batches and streamed into the workbook, so
// memory does not grow with their number; write sends the workbook, done
// removes its temporary files.
func (im *Importer) Export(ctx context.Context, who datascope.Caller, f Filter, columns string) (write func(io.Writer) error, done func(), err error) {
	cols, err := spreadsheet.Columns(columns, exportColumns, func(c exportColumn) string { return c.key })
	if err != nil {
		return nil, nil, err
	}
	max, err := im.s.d.Settings.Int(ctx, spreadsheet.KeyExportMaxRows)
	if err != nil {
		return nil, nil, err
	}
	q := im.s.filtered(who, f)
	n, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, nil, err
	}
	if n > max {
		return nil, nil, errcode.New(errcode.ExportRowLimitExceeded).With("max", max).With("total", n)
	}
	gender := map[string]string{}
	if ch, err := im.dicts.Items(ctx, dictGender); err == nil {
		for _, it := range ch {
			gender[it.Value] = it.Label
		}
	} else {
		return nil, nil, err
	}
	titles := make([]string, len(cols))
	widths := make([]float64, len(cols))
	for i, c := range cols {
		titles[i], widths[i] = c.title, c.width
	}
	cells := make([]any, len(cols))
	next := func(last *ent.SysUser) ([]*ent.SysUser, error) {
		bq := q.Clone().Order(ent.Desc(sysuser.FieldCreateTime), ent.Desc(sysuser.FieldID)).Limit(spreadsheet.ExportBatch)
		if last != nil {
			bq.Where(sysuser.Or(sysuser.CreateTimeLT(last.CreateTime),
				sysuser.And(sysuser.CreateTimeEQ(last.CreateTime), sysuser.IDLT(last.ID))))
		}
		return bq.All(ctx)
	}
	emit := func(rows []*ent.SysUser, put func([]any) error) error {
		items, err := im.s.items(ctx, who, rows)
		if err != nil {
			return err
		}
		for _, it := range items {
			for i, c := range cols {
				cells[i] = c.value(it, gender)
			}
			if err := put(cells); err != nil {
				return err
			}
		}
		return nil
	}
	return spreadsheet.Export(titles, widths, next, emit)
}
