// Package file is the kernel's file area (wire contract §4.11 "Files",
// module Upload): uploads streamed into a storage (host/file/storage),
// resumable chunked uploads, downloads and signed view links
// (host/file/link) with Range and conditional requests. docs/files.md.
package file

import (
	"context"
	"fmt"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/file/link"
	"github.com/adminkernel/kernel/host/file/storage"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "Upload"

// Module returns the area as a kernel module. Its menus (600-615) are
// kernel seed rows (host/seed).
func Module() module.Module {
	return module.Module{Name: Name, Routes: routes}
}

func routes(d *module.Deps, api *route.Group) error {
	cfg := d.Config
	log := d.Logger("AdminKernel.File")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, err := storage.New(ctx, cfg.Service.Upload, cfg.DataPath())
	if err != nil {
		return err
	}
	ring, err := link.FromConfig(cfg)
	if err != nil {
		return fmt.Errorf("file links: %w", err)
	}
	if !ring.Ready() {
		log.Warn("Service:Upload:SigningKeys is not set: no signed file link (/sys/file/{id}/view, avatars) is issued or accepted until a key is set")
	}
	if store.Kind() == config.StorageLocal && cfg.Service.Cache.Provider == config.CacheRedis {
		log.Warn("files are stored on this replica's disk (Service:Upload:Storage Local) while the cache is shared (Redis): with several replicas each sees only its own files; use Storage S3 (docs/files.md)")
	}
	s := NewService(Options{
		Client: d.Client, Settings: d.Settings, Store: store, Ring: ring, Scopes: d.Scopes(),
		Log: log, Expiry: time.Duration(cfg.Service.Upload.ChunkExpiryHours) * time.Hour,
	})
	// Abandoned chunked uploads: removed now, then by chunk/init at most
	// every sweepEvery (the job scheduler takes this over once it lands).
	s.maybeSweep(ctx)
	log.Info("file storage", "kind", store.Kind(), "signed_link_ttl_minutes", cfg.Service.Upload.SignedURLTTLMinutes)
	mount(api, s, cfg.API.MaxPageSize)
	return nil
}
