package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"
)

const contentTypeJSON = "application/json"

// writeJSON answers with status and v encoded by encoding/json straight
// into the response body.
func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) error {
	ctx.SetStatusCode(status)
	ctx.SetContentType(contentTypeJSON)
	ctx.Response.ResetBody()
	return json.NewEncoder(ctx.Response.BodyWriter()).Encode(v)
}

// errorBody is every error's answer (docs/API.md, "Errors"): the message
// docs/API.md gives, unchanged, and beside it the stable code, the field at
// fault and the request's id.
// encodeAnswer encodes v as writeJSON does, into bytes of their own: the
// stored answer of an idempotent request is these bytes.
func encodeAnswer(v any) []byte {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		panic(fmt.Sprintf("BUG: encode answer %T: %v", v, err))
	}
	return b.Bytes()
}

// writeAnswer answers 200 with an encoded answer.
func writeAnswer(ctx *fasthttp.RequestCtx, answer []byte) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(contentTypeJSON)
	ctx.SetBody(answer)
}

type errorBody struct {
	Error     string `json:"error"`
	Code      string `json:"code"`
	Field     string `json:"field,omitempty"`
	RequestID string `json:"request_id"`
}

// writeError answers with e as an error body.
func writeError(ctx *fasthttp.RequestCtx, e *apiError) {
	if e.retryAfterSeconds > 0 {
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, strconv.Itoa(e.retryAfterSeconds))
	}
	// Encoding a struct of strings cannot fail.
	_ = writeJSON(ctx, e.status, errorBody{Error: e.msg, Code: e.code, Field: e.field, RequestID: requestID(ctx)})
}

// ceilSeconds rounds d up to whole seconds, at least 1: a client that
// waits that long is past the moment d measures.
func ceilSeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}
