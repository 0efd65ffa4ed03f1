package externalauth_test

import (
	"context"
	"slices"
	"testing"

	"github.com/adminkernel/kernel/host/externalauth"
	"github.com/adminkernel/kernel/host/kerneltest"
)

func TestSwitches(t *testing.T) {
	k := kerneltest.Start(t, nil)
	sw := externalauth.NewSwitches(k.Settings())
	ctx := context.Background()

	defaults, err := sw.All(ctx, "unset")
	if err != nil {
		t.Fatal(err)
	}
	if !defaults.Enabled || defaults.Provisioning != externalauth.Deny || defaults.LinkByAccount || defaults.DefaultRoleIDs != nil || defaults.DefaultOrgID != 0 {
		t.Errorf("all unset = %+v, want enabled + deny", defaults)
	}

	enabled := []struct {
		value string
		want  bool
	}{{"", true}, {" ", true}, {"true", true}, {"TRUE", true}, {"1", true}, {"false", false}, {"0", false}, {"off", false}, {"yes", false}}
	for _, tc := range enabled {
		t.Run("enabled="+tc.value, func(t *testing.T) {
			set(t, k, externalauth.Key("p", externalauth.SwitchEnabled), tc.value)
			if got, err := sw.Enabled(ctx, "p"); err != nil || got != tc.want {
				t.Errorf("Enabled with %q = %v, %v; want %v", tc.value, got, err, tc.want)
			}
		})
	}

	table := []struct {
		key, value string
		check      func(externalauth.ProviderSwitches) bool
	}{
		{externalauth.SwitchProvisioning, "provision", func(s externalauth.ProviderSwitches) bool { return s.Provisioning == externalauth.Provision }},
		{externalauth.SwitchProvisioning, "Provision", func(s externalauth.ProviderSwitches) bool { return s.Provisioning == externalauth.Provision }},
		{externalauth.SwitchProvisioning, "deny", func(s externalauth.ProviderSwitches) bool { return s.Provisioning == externalauth.Deny }},
		{externalauth.SwitchProvisioning, "auto", func(s externalauth.ProviderSwitches) bool { return s.Provisioning == externalauth.Deny }},
		{externalauth.SwitchLinkByAccount, "True", func(s externalauth.ProviderSwitches) bool { return s.LinkByAccount }},
		{externalauth.SwitchLinkByAccount, "1", func(s externalauth.ProviderSwitches) bool { return s.LinkByAccount }},
		{externalauth.SwitchLinkByAccount, "on", func(s externalauth.ProviderSwitches) bool { return !s.LinkByAccount }},
		{externalauth.SwitchDefaultRoleIDs, " 3, 1,3 ", func(s externalauth.ProviderSwitches) bool { return slices.Equal(s.DefaultRoleIDs, []int64{3, 1}) }},
		// An invalid list reads as the default, none (the registry's rule;
		// fewer roles, never more).
		{externalauth.SwitchDefaultRoleIDs, " 3, 1,x,-2,3,,0 ", func(s externalauth.ProviderSwitches) bool { return len(s.DefaultRoleIDs) == 0 }},
		{externalauth.SwitchDefaultRoleIDs, "", func(s externalauth.ProviderSwitches) bool { return len(s.DefaultRoleIDs) == 0 }},
		{externalauth.SwitchDefaultOrgID, "7", func(s externalauth.ProviderSwitches) bool { return s.DefaultOrgID == 7 }},
		{externalauth.SwitchDefaultOrgID, "-1", func(s externalauth.ProviderSwitches) bool { return s.DefaultOrgID == 0 }},
		{externalauth.SwitchDefaultOrgID, "x", func(s externalauth.ProviderSwitches) bool { return s.DefaultOrgID == 0 }},
	}
	for _, tc := range table {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			set(t, k, externalauth.Key("q", tc.key), tc.value)
			got, err := sw.All(ctx, "q")
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(got) {
				t.Errorf("%s=%q read as %+v", tc.key, tc.value, got)
			}
		})
	}
}

func set(t *testing.T, k *kerneltest.Kernel, key, value string) {
	t.Helper()
	if err := k.Settings().Set(context.Background(), key, value); err != nil {
		t.Fatal(err)
	}
}
