package session

import (
	"context"
	"fmt"

	"github.com/adminkernel/kernel/ent/syssession"
)

// RevokeAll ends every active session of every user (the break-glass
// `adminkernel session revoke --all`) and then drops every cached session
// mark, so that the next request of each session, on every replica sharing
// the cache, reads its row and is refused. Sessions that already expired are
// left as they are. It returns how many sessions were revoked.
//
// A session that logs in meanwhile loses its mark too: its next request
// reads the row, which is active, and caches it again.
func (s *Service) RevokeAll(ctx context.Context, reason string) (int, error) {
	now := s.clock()
	n, err := s.client.SysSession.Update().
		Where(syssession.RevokedAtIsNil(), syssession.ExpiresAtGT(now)).
		SetRevokedAt(now).
		SetRevokeReason(clean(reason, maxReasonLen)).
		Save(ctx)
	if err != nil {
		return 0, fmt.Errorf("session: revoke every session: %w", err)
	}
	if _, err := s.store.DeletePrefix(ctx, KeyPrefix); err != nil {
		s.log.Error("clearing the cache of revoked sessions failed", "sessions", n, "error", err)
		return n, fmt.Errorf("session: the sessions are revoked but their cache entries could not be cleared: %w", err)
	}
	if n > 0 {
		s.ended(nil)
	}
	return n, nil
}
