package host

import (
	"io"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/route"
)

// The app streams request bodies larger than Service:Http:BodyLimitBytes
// (fiber's StreamRequestBody) so that file uploads never hold a whole file
// in memory. fasthttp reads a body up to the limit before the handler
// runs; the rest stays on the connection.

// bodyLimit refuses, with 413 / 48005 as fasthttp did before streaming,
// the body of a route that does not stream (route.StreamBody) when it is
// larger than limit: by its Content-Length, or, for a chunked body, while
// reading it into memory up to limit+1 bytes.
func bodyLimit(limit int) func(route.Route) fiber.Handler {
	return func(r route.Route) fiber.Handler {
		if r.StreamBody {
			return nil
		}
		return func(c fiber.Ctx) error {
			req := c.Request()
			switch cl := req.Header.ContentLength(); {
			case cl > limit:
				return fiber.ErrRequestEntityTooLarge
			case cl == -1 && req.IsBodyStream():
				body, err := io.ReadAll(io.LimitReader(req.BodyStream(), int64(limit)+1))
				if err != nil {
					return fiber.ErrBadRequest
				}
				if len(body) > limit {
					return fiber.ErrRequestEntityTooLarge
				}
				req.SetBodyRaw(body)
			}
			return c.Next()
		}
	}
}

// closeAfterStream keeps the connection usable after a request whose
// body the handlers did not read to its end: fasthttp reads only the first
// 8 KiB before the handler and does not skip the rest afterwards. A body
// within the limit is drained (at most limit bytes); a larger or chunked
// one ends the connection instead.
func closeAfterStream(limit int) fiber.Handler {
	return func(c fiber.Ctx) error {
		err := c.Next()
		req := c.Request()
		if !req.IsBodyStream() {
			return err
		}
		if cl := req.Header.ContentLength(); cl >= 0 && cl <= limit {
			if _, derr := io.Copy(io.Discard, req.BodyStream()); derr == nil {
				return err
			}
		}
		c.Response().SetConnectionClose()
		return err
	}
}
