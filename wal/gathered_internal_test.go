package wal

import (
	"sync/atomic"
	"testing"
)

// TestGathered: after a commit the writer commits again without yielding
// only with fsync on and only when the record right after the last one
// written is there; a later record alone (a hole) or fsync off keeps the
// yield (writer.go, gathered).
func TestGathered(t *testing.T) {
	tests := []struct {
		name    string
		noFsync bool
		ready   []uint64 // seqs whose slots hold a record
		want    bool
	}{
		{"fsync on, next record ready", false, []uint64{5}, true},
		{"fsync on, next and later ready", false, []uint64{5, 6, 7}, true},
		{"fsync on, only a later record ready", false, []uint64{6}, false},
		{"fsync on, nothing ready", false, nil, false},
		{"fsync off, next record ready", true, []uint64{5}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &Log{opts: Options{NoFsync: tt.noFsync}, slots: make([]atomic.Pointer[entry], 8), slotMask: 7, writeNext: 5}
			for _, seq := range tt.ready {
				l.slots[seq&l.slotMask].Store(&entry{seq: seq})
			}
			if got := l.gathered(); got != tt.want {
				t.Fatalf("gathered() = %v, want %v", got, tt.want)
			}
		})
	}
}
