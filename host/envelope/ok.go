package envelope

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/gofiber/fiber/v3"
)

// okPrefix is the start of every success envelope, encoded once: what
// json.Marshal writes for Envelope{Code: 0, MsgKey: SuccessKey} up to the
// data (Args and Message are empty on success and omitted).
var okPrefix = []byte(`{"code":0,"msgKey":"` + SuccessKey + `","data":`)

// maxPooledBody is the largest buffer OK returns to its pool: a buffer
// grown by one large answer is dropped rather than kept for small ones.
const maxPooledBody = 64 << 10

// okBuffer is a pooled output buffer with its JSON encoder.
type okBuffer struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var okBuffers = sync.Pool{New: func() any {
	b := &okBuffer{}
	b.enc = json.NewEncoder(&b.buf) // escapes HTML like json.Marshal
	return b
}}

// OK writes a success envelope carrying data: the bytes json.Marshal gives
// for Envelope{Code: errcode.Success, MsgKey: SuccessKey, Data: data}, with
// Content-Type application/json; charset=utf-8 (what c.JSON sets). It
// encodes data only, after the pre-encoded prefix, into a pooled buffer:
// every answer of the kernel goes through here, so the envelope itself
// costs no allocation and no reflection. A data value json cannot encode
// is returned as the encoder's error, and nothing is written.
func OK(c fiber.Ctx, data any) error {
	b := okBuffers.Get().(*okBuffer)
	defer func() {
		if b.buf.Cap() <= maxPooledBody {
			okBuffers.Put(b)
		}
	}()
	b.buf.Reset()
	b.buf.Write(okPrefix)
	if err := b.enc.Encode(data); err != nil {
		return err
	}
	b.buf.Truncate(b.buf.Len() - 1) // Encode ends with a newline
	b.buf.WriteByte('}')
	resp := &c.RequestCtx().Response
	resp.SetBody(b.buf.Bytes()) // copies
	resp.Header.SetContentType(fiber.MIMEApplicationJSONCharsetUTF8)
	return nil
}
