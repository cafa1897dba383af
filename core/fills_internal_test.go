package core

import (
	"reflect"
	"testing"

	"github.com/google/uuid"

	"marketd/core/money"
)

// TestFillKeepsEveryFieldButReasoning: a fill holds each field of
// TradeSummary but the reasoning, with the same type, and no pointer, so
// that a field added to TradeSummary cannot be lost from the fills
// silently and the fills' chunks stay unscanned by the collector.
func TestFillKeepsEveryFieldButReasoning(t *testing.T) {
	ts, ft := reflect.TypeFor[TradeSummary](), reflect.TypeFor[fill]()
	for i := range ts.NumField() {
		f := ts.Field(i)
		g, ok := ft.FieldByName(f.Name)
		if f.Name == "Reasoning" {
			if ok {
				t.Errorf("fill has the reasoning")
			}
			continue
		}
		if !ok || g.Type != f.Type {
			t.Errorf("TradeSummary.%s %v: fill has %v (found %v)", f.Name, f.Type, g.Type, ok)
		}
	}
	if ft.NumField() != ts.NumField()-1 {
		t.Errorf("fill has %d fields, TradeSummary %d", ft.NumField(), ts.NumField())
	}
	for i := range ft.NumField() {
		switch k := ft.Field(i).Type.Kind(); k {
		case reflect.Pointer, reflect.String, reflect.Slice, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func:
			t.Errorf("fill.%s is a %v", ft.Field(i).Name, k)
		}
	}
	in := TradeSummary{ID: uuid.New(), Market: uuid.New(), Currency: money.USDC, Side: No, Sell: true,
		Shares: 7, Cost: 11, Vig: 13, Reasoning: "why", Time: 17}
	want := in
	want.Reasoning = ""
	f := fillOf(&in)
	if got := f.summary(); got != want {
		t.Errorf("fill of %+v read back as %+v, want %+v", in, got, want)
	}
}
