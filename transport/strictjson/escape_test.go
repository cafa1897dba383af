package strictjson

import "testing"

func TestUnpairedSurrogate(t *testing.T) {
	tests := []struct {
		s    string
		want int
	}{
		{`"plain"`, -1},
		{`"\n\t\\\"\/"`, -1},
		{`"\u0041\u00e9\uFFFD"`, -1},
		{`"\ud83d\ude80"`, -1},
		{`"\uD83D\uDE80"`, -1},
		{`"\\ud800"`, -1},
		{`"\\\ud800"`, 3},
		{`"\ud800"`, 1},
		{`"\udc00"`, 1},
		{`"\udfff"`, 1},
		{`"a\ud800b"`, 2},
		{`"\ud800\u0041"`, 1},
		{`"\ud800\n"`, 1},
		{`"\ud83d\ude80\ude80"`, 13},
		{`"\ud800\ud800\udc00"`, 1},
		{`, "\ud800`, 3},   // a key with what precedes it, cut short
		{`"\u`, -1},        // cut inside an escape: no surrogate to see
		{`"\ud83d\ude`, 1}, // cut inside the low half
		{`\`, -1},
	}
	for _, tc := range tests {
		if got := unpairedSurrogate([]byte(tc.s)); got != tc.want {
			t.Errorf("unpairedSurrogate(%s) = %d, want %d", tc.s, got, tc.want)
		}
	}
}
