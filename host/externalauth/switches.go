package externalauth

import (
	"context"

	"github.com/adminkernel/kernel/host/sysconfig"
)

// KeyPrefix starts every runtime switch of a provider:
// sys.externalauth.{code}.{enabled|provisioning|linkByAccount|defaultRoleIds|defaultOrgId}.
const KeyPrefix = "sys.externalauth."

// Key returns the config key of one switch of a provider.
func Key(code, name string) string { return KeyPrefix + code + "." + name }

// Switch names.
const (
	SwitchEnabled        = "enabled"
	SwitchProvisioning   = "provisioning"
	SwitchLinkByAccount  = "linkByAccount"
	SwitchDefaultRoleIDs = "defaultRoleIds"
	SwitchDefaultOrgID   = "defaultOrgId"
)

// Provisioning is what happens to an unbound identity at its first login.
type Provisioning string

// Provisioning modes.
const (
	// Deny steers the user to a password or SMS login and a pending link.
	Deny Provisioning = "deny"
	// Provision creates an account.
	Provision Provisioning = "provision"
)

// Switches reads the runtime switches of external-login providers from
// sys_config through the config service. It is the one reader shared by the
// endpoints and the login flow, so a change made through the config service
// takes effect on the next request. With every key unset a provider is
// enabled and provisioning is denied.
type Switches struct {
	settings *sysconfig.Service
}

// NewSwitches returns the reader.
func NewSwitches(settings *sysconfig.Service) *Switches {
	return &Switches{settings: settings}
}

// ProviderSwitches are all switches of one provider.
type ProviderSwitches struct {
	Enabled        bool
	Provisioning   Provisioning
	LinkByAccount  bool
	DefaultRoleIDs []int64
	// DefaultOrgID is 0 when unset.
	DefaultOrgID int64
}

// The switches' defaults, ranges and reading rules are those of the
// registry's sys.externalauth.*.{name} families (host/sysconfig): with every
// key unset a provider is enabled, provisioning is denied, nothing is linked
// by account and no default roles or organisation are set. A stored value
// the registry would refuse reads as the default (with one WARN), except the
// enabled switch, which fails closed: an invalid value ("off") is off.

// Enabled: "true"/"1" on, "false"/"0" off (any case); unset or blank on;
// anything else off.
func (s *Switches) Enabled(ctx context.Context, code string) (bool, error) {
	return s.settings.Bool(ctx, Key(code, SwitchEnabled))
}

// Provisioning: "provision" (any case) creates accounts; default deny.
func (s *Switches) Provisioning(ctx context.Context, code string) (Provisioning, error) {
	v, err := s.settings.String(ctx, Key(code, SwitchProvisioning))
	if err != nil {
		return Deny, err
	}
	if v == string(Provision) {
		return Provision, nil
	}
	return Deny, nil
}

// LinkByAccount: "true"/"1" on; default off.
func (s *Switches) LinkByAccount(ctx context.Context, code string) (bool, error) {
	return s.settings.Bool(ctx, Key(code, SwitchLinkByAccount))
}

// DefaultRoleIDs: comma-separated positive ids, duplicates dropped.
func (s *Switches) DefaultRoleIDs(ctx context.Context, code string) ([]int64, error) {
	all, err := s.settings.IDs(ctx, Key(code, SwitchDefaultRoleIDs))
	if err != nil {
		return nil, err
	}
	var ids []int64
	seen := map[int64]bool{}
	for _, n := range all {
		if !seen[n] {
			seen[n] = true
			ids = append(ids, n)
		}
	}
	return ids, nil
}

// DefaultOrgID: a positive id, 0 when unset.
func (s *Switches) DefaultOrgID(ctx context.Context, code string) (int64, error) {
	n, err := s.settings.Int(ctx, Key(code, SwitchDefaultOrgID))
	return int64(n), err
}

// All reads every switch of a provider.
func (s *Switches) All(ctx context.Context, code string) (ProviderSwitches, error) {
	var out ProviderSwitches
	var err error
	if out.Enabled, err = s.Enabled(ctx, code); err != nil {
		return out, err
	}
	if out.Provisioning, err = s.Provisioning(ctx, code); err != nil {
		return out, err
	}
	if out.LinkByAccount, err = s.LinkByAccount(ctx, code); err != nil {
		return out, err
	}
	if out.DefaultRoleIDs, err = s.DefaultRoleIDs(ctx, code); err != nil {
		return out, err
	}
	out.DefaultOrgID, err = s.DefaultOrgID(ctx, code)
	return out, err
}
