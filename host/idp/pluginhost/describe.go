package pluginhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/grpcprovider"
)

// Description is what DescribeBinary learnt from a plugin binary.
type Description struct {
	Path string `json:"path"`
	// SHA256 is the hex SHA-256 of the binary: the value of its pin.
	SHA256 string `json:"sha256"`
	// FileCode is the code the file name gives (adminkernel-provider-<code>),
	// "" when the name is not a plugin name.
	FileCode string `json:"fileCode,omitempty"`
	// The plugin's descriptor.
	Code            string `json:"code"`
	DisplayName     string `json:"displayName"`
	Icon            string `json:"icon,omitempty"`
	Brand           string `json:"brand,omitempty"`
	ProtocolVersion int    `json:"protocolVersion"`
	// NegotiatedVersion is the protocol version of the handshake;
	// KernelVersions are the versions this kernel speaks.
	NegotiatedVersion int   `json:"negotiatedVersion"`
	KernelVersions    []int `json:"kernelVersions"`
	// Problems are the reasons the plugin host would not launch it from
	// the plugin folder (file name, code, protocol version).
	Problems []string `json:"problems"`
	// Warnings are what the kernel would ignore without refusing the
	// plugin: an icon or brand it drops.
	Warnings []string `json:"warnings"`
}

// DescribeBinary starts the plugin binary at path the way the host does
// (gRPC, mutual TLS, no inherited environment, start timeout), asks it for
// its descriptor, and stops it again. It never configures it: no
// settings leave the kernel. log receives the plugin's output (nil: none).
func DescribeBinary(ctx context.Context, path string, log hclog.Logger) (Description, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Description{}, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return Description{}, err
	}
	if !st.Mode().IsRegular() {
		return Description{}, fmt.Errorf("%s is not a regular file", abs)
	}
	d := Description{Path: abs, KernelVersions: slices.Sorted(maps.Keys(grpcprovider.VersionedPlugins())), Problems: []string{}, Warnings: []string{}}
	if d.SHA256, err = fileSHA256(abs); err != nil {
		return Description{}, err
	}
	if code, ok := strings.CutPrefix(filepath.Base(abs), FilePrefix); ok && idp.ValidCode(code) {
		d.FileCode = code
	} else {
		d.Problems = append(d.Problems, "the file name is not "+FilePrefix+"<code>: the plugin host skips it")
	}
	cmd := exec.CommandContext(ctx, abs) //nolint:gosec // the binary the operator named on the command line
	client := plugin.NewClient(launchConfig(cmd, nil, MaxStartTimeout, log))
	defer client.Kill()
	rpc, err := client.Client()
	if err != nil {
		return Description{}, fmt.Errorf("starting %s: %w", abs, err)
	}
	raw, err := rpc.Dispense(grpcprovider.PluginName)
	if err != nil {
		return Description{}, fmt.Errorf("dispensing the provider: %w", err)
	}
	prov, ok := raw.(pluginsdk.Provider)
	if !ok {
		return Description{}, fmt.Errorf("dispensed %T, not a provider", raw)
	}
	cctx, cancel := context.WithTimeout(ctx, DefaultCallTimeout)
	defer cancel()
	desc, err := prov.Describe(cctx)
	if err != nil {
		return Description{}, fmt.Errorf("describing itself: %w", err)
	}
	d.Code, d.DisplayName, d.Icon, d.Brand, d.ProtocolVersion = desc.Code, desc.DisplayName, desc.Icon, desc.Brand, desc.ProtocolVersion
	d.NegotiatedVersion = client.NegotiatedVersion()
	if d.FileCode != "" && d.Code != d.FileCode {
		d.Problems = append(d.Problems, fmt.Sprintf("the plugin reports provider code %q but its file name says %q", d.Code, d.FileCode))
	}
	if !idp.ValidCode(d.Code) {
		d.Problems = append(d.Problems, fmt.Sprintf("%q is not a provider code", d.Code))
	}
	if d.Icon != "" && !pluginsdk.ValidIcon(d.Icon) {
		d.Warnings = append(d.Warnings, fmt.Sprintf("the icon %q is not an Iconify name prefix:name (lowercase letters, digits and hyphens, at most %d characters): the kernel drops it", d.Icon, pluginsdk.MaxIconLen))
	}
	if d.Brand != "" && !pluginsdk.ValidBrand(d.Brand) {
		d.Warnings = append(d.Warnings, fmt.Sprintf("the brand %q is not a brand key (lowercase letters, digits, '_' and '-', at most %d characters): the kernel drops it", d.Brand, pluginsdk.MaxBrandLen))
	}
	if d.ProtocolVersion != d.NegotiatedVersion {
		d.Problems = append(d.Problems, fmt.Sprintf("the plugin reports protocol version %d but speaks version %d", d.ProtocolVersion, d.NegotiatedVersion))
	}
	return d, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path) //nolint:gosec // the binary the operator named
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
