package transport

import (
	"strconv"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/transport/strictjson"
)

// maxOffset bounds paging offsets: far past any list, small enough for an
// int on every platform.
const maxOffset = 1 << 30

// intParam reads an integer query parameter in [lo, hi], def when absent.
func intParam(args *fasthttp.Args, name string, def, lo, hi int) (int, error) {
	v := args.Peek(name)
	if v == nil {
		return def, nil
	}
	n, err := strconv.Atoi(string(v))
	if err != nil || n < lo || n > hi {
		return 0, fieldError(name, "must be an integer from %d to %d", lo, hi)
	}
	return n, nil
}

// pathUUID reads a UUID path parameter; a malformed one is a 400 naming it.
func pathUUID(ctx *fasthttp.RequestCtx, name string) (uuid.UUID, error) {
	s, _ := ctx.UserValue(name).(string)
	return strictjson.UUID(name, s)
}

// decodeBody decodes the request's JSON body strictly into dst.
func decodeBody(ctx *fasthttp.RequestCtx, dst any) error {
	return strictjson.Decode(ctx.PostBody(), dst)
}
