package user

import (
	"path/filepath"
	"strings"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/spreadsheet"
)

// uploadMaxKey is the upload size limit the import shares with the file
// area (44002 beyond it).
const uploadMaxKey = "sys.upload.maxSizeMb"

// mountSheets binds the import and export endpoints of /sys/user.
func mountSheets(api *route.Group, im *Importer, who bind.Caller[datascope.Caller]) {
	g := api.Group("/sys/user")
	h := sheetHandler{im: im, who: who}
	g.Get("/import/template", route.Session, h.template).Doc("User import template (xlsx)", nil, nil)
	g.Post("/import/preview", route.Permission, h.preview).Doc("Preview a user import (multipart file, mapping)", nil, ImportPreview{})
	g.Post("/import/validate", route.Permission, bind.Create(who, im.Validate)).Doc("Validate user import rows", ImportRowsInput{}, ImportPreview{})
	g.Post("/import/error-report", route.Permission, h.errorReport).Doc("User import error report (xlsx)", ImportRowsInput{}, nil)
	g.Post("/import/commit", route.Permission, noStore(bind.Create(who, im.Commit))).NeedsReauth().Doc("Commit a user import", ImportCommitInput{}, ImportResult{})
	g.Get("/export", route.Permission, h.export).Doc("Export users (xlsx)", nil, nil).
		Queries("Account", "Name", "OrgId:int64", "RoleId:int64", "Enabled:bool", "columns").OpLog = true
}

type sheetHandler struct {
	im  *Importer
	who bind.Caller[datascope.Caller]
}

func (h sheetHandler) template(c fiber.Ctx) error {
	write, done, err := h.im.Template(c.Context())
	if err != nil {
		return err
	}
	return spreadsheet.Send(c, "user-import-template.xlsx", write, done)
}

func (h sheetHandler) preview(c fiber.Ctx) error {
	who, err := h.who(c)
	if err != nil {
		return err
	}
	fh, err := c.FormFile("file")
	if err != nil {
		return errcode.New(errcode.FileEmpty)
	}
	if ext := strings.ToLower(filepath.Ext(fh.Filename)); ext != ".xlsx" {
		return errcode.New(errcode.FileExtNotAllowed).With("ext", ext)
	}
	if fh.Size == 0 {
		return errcode.New(errcode.FileEmpty)
	}
	mb, err := h.im.s.d.Settings.Int(c.Context(), uploadMaxKey)
	if err != nil {
		return err
	}
	if fh.Size > int64(mb)<<20 {
		return errcode.New(errcode.FileTooLarge).With("max", mb)
	}
	f, err := fh.Open()
	if err != nil {
		return request.Invalid("file")
	}
	defer func() { _ = f.Close() }()
	out, err := h.im.Preview(c.Context(), who, f, fh.Size, c.FormValue("mapping"))
	if err != nil {
		return err
	}
	return envelope.OK(c, out)
}

func (h sheetHandler) errorReport(c fiber.Ctx) error {
	who, err := h.who(c)
	if err != nil {
		return err
	}
	var in ImportRowsInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	write, done, err := h.im.ErrorReport(c.Context(), who, in, request.Language(c))
	if err != nil {
		return err
	}
	return spreadsheet.Send(c, "user-import-errors.xlsx", write, done)
}

func (h sheetHandler) export(c fiber.Ctx) error {
	who, err := h.who(c)
	if err != nil {
		return err
	}
	f, err := pageFilter(c)
	if err != nil {
		return err
	}
	write, done, err := h.im.Export(c.Context(), who, f, request.Query(c, "columns"))
	if err != nil {
		return err
	}
	return spreadsheet.Send(c, "users.xlsx", write, done)
}
