package externalauth

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/idp/doctor"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// DoctorPermission is the permission code of the setup doctor (menu 319,
// a button of the config page 310).
const DoctorPermission = "POST:/api/v1/auth/external/{provider}/doctor"

// maxDoctorRuns caps the doctor runs of the whole process: each makes
// outbound calls to vendors.
const maxDoctorRuns = 4

// doctorDeadline bounds one doctor run.
const doctorDeadline = 30 * time.Second

// DoctorTarget is what the setup doctor checks for a registry entry: an
// OIDC entry's settings, or a plugin's (or compiled provider's) settings
// section, with the redirect URI ("" and why when it is unknown).
func DoctorTarget(e idp.Entry, cfg *config.Config, redirectURI, redirectProblem string) doctor.Target {
	ea := &cfg.Service.ExternalAuth
	t := doctor.Target{Entry: e, RedirectURI: redirectURI, RedirectProblem: redirectProblem}
	if e.Source.Kind == idp.Builtin {
		for i := range ea.Oidc {
			if strings.EqualFold(ea.Oidc[i].Code, e.Code) {
				o := ea.Oidc[i]
				t.OIDC = &o
				return t
			}
		}
	}
	t.Settings = ea.ProviderSection(e.Code)
	t.Section = ea.SectionKey(e.Code)
	return t
}

// doctorRunner serves POST {provider}/doctor: one run per provider at a
// time and at most maxDoctorRuns in all (40038 beyond).
type doctorRunner struct {
	svc *Service
	cfg *config.Config
	doc *doctor.Doctor

	mu      sync.Mutex
	running map[string]bool
}

func newDoctorRunner(svc *Service, cfg *config.Config) *doctorRunner {
	return &doctorRunner{svc: svc, cfg: cfg, doc: &doctor.Doctor{}, running: map[string]bool{}}
}

func (d *doctorRunner) routes(g *route.Group, h *Handler) {
	g.Post("/{provider}/doctor", route.Permission, func(c fiber.Ctx) error {
		rep, err := d.run(c.Context(), strings.Clone(c.Params("provider")), h.requestBase(c))
		if err != nil {
			return err
		}
		return envelope.OK(c, rep)
	}).Doc("Check a provider's setup", nil, doctor.Report{})
}

func (d *doctorRunner) run(ctx context.Context, code, requestBase string) (doctor.Report, error) {
	e, ok := d.svc.o.Providers.Get(code)
	if !ok {
		return doctor.Report{}, errcode.New(errcode.ProviderNotFound).With("code", clipCode(code))
	}
	d.mu.Lock()
	if d.running[e.Code] || len(d.running) >= maxDoctorRuns {
		d.mu.Unlock()
		return doctor.Report{}, errcode.New(errcode.ProviderDoctorBusy)
	}
	d.running[e.Code] = true
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.running, e.Code)
		d.mu.Unlock()
	}()
	redirect, problem := "", ""
	if uri, err := d.svc.RedirectURI(e.Code, requestBase); err == nil {
		redirect = uri
	} else {
		problem = "Service:ExternalAuth:CallbackBaseUrl is not set"
	}
	rctx, cancel := context.WithTimeout(ctx, doctorDeadline)
	defer cancel()
	return d.doc.Run(rctx, DoctorTarget(e, d.cfg, redirect, problem)), nil
}

// clipCode bounds a code echoed in an error.
func clipCode(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

var doctorMenu = seed.Menu{ID: 319, ParentID: 310, Type: seed.MenuButton, Title: "外部登录-诊断", Permission: DoctorPermission, Sort: 9}
