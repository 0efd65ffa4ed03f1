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

// closeAfterStream ends the connection after a request whose body may not
// have been read to its end (larger than the limit, or chunked): fasthttp
// does not skip what a handler left unread, so the connection cannot carry
// another request.
func closeAfterStream(limit int) fiber.Handler {
	return func(c fiber.Ctx) error {
		if cl := c.Request().Header.ContentLength(); cl > limit || cl == -1 {
			c.Response().SetConnectionClose()
		}
		return c.Next()
	}
}
