package load

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	"marketd/internal/cputime"
)

// clockTicks is the unit of /proc/PID/stat's utime and stime: USER_HZ,
// which Linux fixes at 100 for every architecture it exposes to user
// space (proc(5)).
const clockTicks = 100

// CPUUse is the CPU time a run cost, per request sent: the load
// generator's process (everything in it, a baseline handler served in it
// included) and, when the server is a process of its own, the server's.
type CPUUse struct {
	// LoadUs is this process's user and system CPU per request, in
	// microseconds.
	LoadUs float64 `json:"load_us_per_request"`
	// ServerUs is the server process's, nil when the server runs in this
	// process (or is not on this machine).
	ServerUs *float64 `json:"server_us_per_request,omitempty"`
	// ServerInProcess is true when the server runs in this process, so
	// that LoadUs holds both.
	ServerInProcess bool `json:"server_in_process,omitempty"`
}

// cpuSample is the CPU time used so far by this process and the server.
type cpuSample struct {
	self, server time.Duration
	serverOK     bool
}

// sampleCPU reads this process's CPU time and, when pid is not 0, that
// of process pid. A server whose stat cannot be read is left out.
func sampleCPU(pid int) cpuSample {
	var s cpuSample
	s.self, _ = cputime.Process() // unreadable: counted as none, as before
	if pid != 0 {
		s.server, s.serverOK = processCPU(pid)
	}
	return s
}

// processCPU returns the user and system CPU time of process pid.
func processCPU(pid int) (time.Duration, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	return statCPU(raw)
}

// statCPU reads utime and stime, fields 14 and 15 of a /proc/PID/stat
// line (proc(5)). They are counted after the command's closing
// parenthesis, since the command, field 2, may hold spaces and
// parentheses itself.
func statCPU(raw []byte) (time.Duration, bool) {
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(raw[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil || utime < 0 || stime < 0 {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, true
}

// cpuUse is the CPU time between before and after per request.
func cpuUse(before, after cpuSample, requests int64, inProcess bool) *CPUUse {
	if requests <= 0 {
		return nil
	}
	per := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) / float64(requests) }
	u := &CPUUse{LoadUs: per(after.self - before.self), ServerInProcess: inProcess}
	if before.serverOK && after.serverOK {
		us := per(after.server - before.server)
		u.ServerUs = &us
	}
	return u
}
