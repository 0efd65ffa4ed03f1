package externalauth

import (
	"context"
	"strconv"
	"strings"

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

// value returns a trimmed value; ok is false when the key is missing or
// blank.
func (s *Switches) value(ctx context.Context, code, name string) (string, bool, error) {
	v, ok, err := s.settings.Value(ctx, Key(code, name))
	if err != nil || !ok {
		return "", false, err
	}
	v = strings.TrimSpace(v)
	return v, v != "", nil
}

// Enabled: missing or blank means on; "true" (any case) or "1" is on;
// anything else is off.
func (s *Switches) Enabled(ctx context.Context, code string) (bool, error) {
	v, ok, err := s.value(ctx, code, SwitchEnabled)
	if err != nil || !ok {
		return err == nil, err
	}
	return on(v), nil
}

// Provisioning: "provision" (any case) creates accounts; anything else,
// or nothing, denies.
func (s *Switches) Provisioning(ctx context.Context, code string) (Provisioning, error) {
	v, _, err := s.value(ctx, code, SwitchProvisioning)
	if err != nil {
		return Deny, err
	}
	if strings.EqualFold(v, string(Provision)) {
		return Provision, nil
	}
	return Deny, nil
}

// LinkByAccount: "true" (any case) or "1" is on; default off.
func (s *Switches) LinkByAccount(ctx context.Context, code string) (bool, error) {
	v, _, err := s.value(ctx, code, SwitchLinkByAccount)
	return on(v), err
}

// DefaultRoleIDs: comma-separated positive ids (blanks, malformed entries
// and duplicates are skipped).
func (s *Switches) DefaultRoleIDs(ctx context.Context, code string) ([]int64, error) {
	v, _, err := s.value(ctx, code, SwitchDefaultRoleIDs)
	if err != nil {
		return nil, err
	}
	var ids []int64
	seen := map[int64]bool{}
	for part := range strings.SplitSeq(v, ",") {
		if n, ok := positive(part); ok && !seen[n] {
			seen[n] = true
			ids = append(ids, n)
		}
	}
	return ids, nil
}

// DefaultOrgID: a positive id, 0 when unset or malformed.
func (s *Switches) DefaultOrgID(ctx context.Context, code string) (int64, error) {
	v, _, err := s.value(ctx, code, SwitchDefaultOrgID)
	if err != nil {
		return 0, err
	}
	n, _ := positive(v)
	return n, nil
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

func on(v string) bool {
	return strings.EqualFold(v, "true") || v == "1"
}

func positive(s string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}
