package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/memcache"
	"github.com/adminkernel/kernel/host/cache/rediscache"
	"github.com/adminkernel/kernel/host/captcha"
	"github.com/adminkernel/kernel/host/externalauth"
	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/idp/pluginhost"
	"github.com/adminkernel/kernel/host/mfa"
	"github.com/adminkernel/kernel/host/mfa/reauth"
	"github.com/adminkernel/kernel/host/password"
	"github.com/adminkernel/kernel/host/ratelimit"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/sms"
	"github.com/adminkernel/kernel/host/sysconfig"
	"github.com/adminkernel/kernel/host/token"
)

// openCache builds the configured cache: in process by default, Redis when
// Service:Cache:Provider is Redis (shared by every replica).
func openCache(ctx context.Context, cfg *config.Config, opts ...rediscache.Option) (cache.Store, error) {
	c := cfg.Service.Cache
	if c.Provider == config.CacheRedis {
		store, err := rediscache.New(ctx, c.Redis, opts...)
		if err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
		return store, nil
	}
	return memcache.New(memcache.Options{
		EntryLimit:  c.MemoryEntryLimit,
		MaxEntryAge: time.Duration(c.MaxEntryMinutes) * time.Minute,
	})
}

// buildServices composes the login machinery: cache, runtime settings,
// permissions, tokens, sessions, captcha, SMS and the login service.
func (k *Kernel) buildServices(ctx context.Context) error {
	cfg := k.cfg
	store := k.store // opened by New (openShared)
	var err error
	client := k.db.Client
	ttl := time.Duration(cfg.Service.Cache.PermissionMinutes) * time.Minute
	k.settings = sysconfig.New(client, store, ttl, k.events, k.registry, k.logs.For("AdminKernel.Config"))
	k.perms = authz.New(client, store, ttl, k.events)
	if k.tokens, err = token.FromConfig(cfg); err != nil {
		return err
	}
	k.sessions = session.New(client, store, session.Options{
		RefreshGrace: time.Duration(cfg.Service.Security.Session.RefreshGraceSeconds) * time.Second,
		Idle:         time.Duration(cfg.Service.Security.Session.IdleMinutesNormal) * time.Minute,
		IdleMFA:      time.Duration(cfg.Service.Security.Session.IdleMinutesMfa) * time.Minute,
		CacheTTL:     ttl,
		Log:          k.logs.For("AdminKernel.Session"),
		NextID:       k.ids.Next,
		Now:          k.sessionClock,
		Events:       k.events,
		Metrics:      k.metrics,
	})
	k.authn = authn.New(k.tokens, k.sessions, k.perms, authn.Options{Log: k.logs.For("AdminKernel.Authn")})
	if k.trusted, err = request.ParseTrusted(cfg.Service.HTTP.TrustedProxies); err != nil {
		return err
	}
	k.providers = idp.NewRegistry()
	if err := externalauth.RegisterBuiltins(k.providers, cfg, k.tracer.TransportWrapper()); err != nil {
		return err
	}
	if err := externalauth.RegisterCompiled(ctx, k.providers, cfg, k.compiled); err != nil {
		return err
	}
	popts, err := pluginhost.FromConfig(cfg)
	if err != nil {
		return err
	}
	popts.Logger, popts.Registry, popts.Metrics = k.logs.For("AdminKernel.PluginHost"), k.providers, k.metrics
	if k.tracer != nil {
		popts.Env, popts.GRPCDialOptions = k.tracer.PluginEnv, k.tracer.GRPCDialOptions()
	}
	if k.plugins, err = pluginhost.Load(ctx, popts); err != nil {
		return err
	}
	sender, err := smsSender(cfg, k.logs.For("AdminKernel.Sms"))
	if err != nil {
		return err
	}
	k.hasher = hasher(cfg, k.logs.For("AdminKernel.Password"))
	k.passwords = k.hasher
	if k.hashHook != nil {
		if k.passwords = k.hashHook(k.hasher); k.passwords == nil {
			return errors.New("host: Options.PasswordHasher returned no hasher")
		}
	}
	k.captcha = captcha.New(store, captcha.Options{
		MaxPending: cfg.Service.Security.Captcha.MaxPending,
		Log:        k.logs.For("AdminKernel.Captcha"),
	})
	// The second-factor area (host/mfa): one TOTP service and one relying
	// party for the login gate, the self-service, the re-authentication
	// and the administrator's clear. Login starts a second factor through
	// the gate (auth.SecondFactor); the area finishes logins through the
	// login service (mfa.Logins).
	windows := reauth.NewWindows(store, time.Duration(cfg.Service.Security.Reauth.WindowSeconds)*time.Second)
	smsCodes := sms.New(store, sms.CodeOptions{})
	notify := k.personalNotice()
	gate, err := mfa.NewGate(mfa.Deps{
		Client:    client,
		Config:    cfg,
		Store:     store,
		Settings:  k.settings,
		Sessions:  k.sessions,
		SmsCodes:  smsCodes,
		SmsSender: sender,
		Windows:   windows,
		Notify:    notify,
		// The area logs as the login it was part of (the log source
		// names are what operators filter on).
		Log: k.logs.For("AdminKernel.Auth"),
	})
	if err != nil {
		return err
	}
	k.auth, err = auth.New(auth.Deps{
		Client:       client,
		Config:       cfg,
		Store:        store,
		Settings:     k.settings,
		Hasher:       k.passwords,
		Sessions:     k.sessions,
		Tokens:       k.tokens,
		Captcha:      k.captcha,
		SmsCodes:     smsCodes,
		SmsSender:    sender,
		SecondFactor: gate,
		Windows:      windows,
		Notify:       notify,
		Log:          k.logs.For("AdminKernel.Auth"),
		Metrics:      k.metrics,
	})
	if err != nil {
		return err
	}
	k.mfa = mfa.NewFactors(gate, k.auth)
	k.reauth = reauth.New(reauth.Deps{
		Client:    client,
		Settings:  k.settings,
		Sessions:  k.sessions,
		Windows:   windows,
		Sensitive: reauth.NewSensitive(client, store, k.routes.Routes),
		Passwords: k.auth,
		Totp:      totpByID{gate.Totp()},
		Factors:   gate.Totp(),
		Cleared:   gate.FactorsCleared,
		Log:       k.logs.For("AdminKernel.Reauth"),
	})
	return nil
}

func smsSender(cfg *config.Config, log hclog.Logger) (sms.Sender, error) {
	s := cfg.Service.Security.Sms
	if s.Sender == "Webhook" {
		return sms.NewWebhookSender(s.WebhookURL, s.WebhookHeader, s.WebhookSecret.Reveal(), nil), nil
	}
	if cfg.IsProduction() {
		log.Warn("SMS codes are written to the log (Service:Security:Sms:Sender=Log); configure a Webhook sender before enabling SMS login")
	}
	return sms.LogSender{Log: log}, nil
}

// rateLimiter limits /api per client IP with the runtime settings
// sys.security.rateLimit.*.
func (k *Kernel) rateLimiter() fiber.Handler {
	// With Redis every Incr is a round trip: the general bucket is counted
	// in batches (ratelimit.Options.Batch); the in-process cache needs none.
	window := k.settings.Number("sys.security.rateLimit.windowSeconds")
	batch := 0
	if k.scale != nil {
		batch = ratelimit.DefaultBatch
	}
	return ratelimit.New(k.store, ratelimit.Options{
		Enabled: k.settings.Switch("sys.security.rateLimit.enabled"),
		Window: func(ctx context.Context) time.Duration {
			return time.Duration(window(ctx)) * time.Second
		},
		AuthLimit:     k.settings.Number("sys.security.rateLimit.authPermitPerWindow"),
		PasswordLimit: k.settings.Number("sys.security.rateLimit.passwordPermitPerWindow"),
		Limit:         k.settings.Number("sys.security.rateLimit.permitPerWindow"),
		Trusted:       k.trusted,
		Log:           k.logs.For("AdminKernel.RateLimit"),
		Batch:         batch,
		Metrics:       k.metrics,
	})
}

// Settings returns the runtime settings service (sys_config through the cache).
func (k *Kernel) Settings() *sysconfig.Service { return k.settings }

// Permissions returns the permission resolver.
func (k *Kernel) Permissions() *authz.Resolver { return k.perms }

// Sessions returns the session service.
func (k *Kernel) Sessions() *session.Service { return k.sessions }

// Auth returns the login service (IssueTokens is the shared token step).
func (k *Kernel) Auth() *auth.Service { return k.auth }

// Reauth returns the re-authentication service (SetTotp and SetFactors
// wire the TOTP area into it).
func (k *Kernel) Reauth() *reauth.Service { return k.reauth }

// Mfa returns the second-factor area (its login steps, enrolment, the
// TOTP state and the passkey relying party).
func (k *Kernel) Mfa() *mfa.Factors { return k.mfa }

// Tokens returns the token issuer (access and refresh tokens).
func (k *Kernel) Tokens() *token.Issuer { return k.tokens }

// Captcha returns the captcha service.
func (k *Kernel) Captcha() *captcha.Service { return k.captcha }

// Hasher returns the kernel's own password hasher (with its pool); the
// requests go through Passwords.
func (k *Kernel) Hasher() *password.PBKDF2 { return k.hasher }

// Passwords returns the hasher the requests use: the kernel's, or the
// wrapper of Options.PasswordHasher.
func (k *Kernel) Passwords() password.Hasher { return k.passwords }

// Cache returns the cache.
func (k *Kernel) Cache() cache.Store { return k.store }

// hasher is the password hasher of the requests, with its bounded pool
// (Service:Security:Password:Hash*; docs/design/security.md, Passwords).
func hasher(cfg *config.Config, log hclog.Logger) *password.PBKDF2 {
	pw := cfg.Service.Security.Password
	return password.New(pw.EffectiveIterations()).WithLimits(password.Limits{
		Concurrency: pw.HashConcurrency,
		Queue:       pw.HashQueue,
		MaxWait:     time.Duration(pw.HashMaxWaitMillis) * time.Millisecond,
		PerClient:   pw.HashPerClient,
		PerAccount:  pw.HashPerAccount,
		Log:         log,
	})
}

// totpByID is the TOTP check of a re-authentication (reauth.TotpChecker).
type totpByID struct{ m *mfa.Service }

func (t totpByID) Verify(ctx context.Context, userID int64, code string) error {
	return t.m.VerifyUser(ctx, userID, code)
}
