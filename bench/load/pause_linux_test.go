package load

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startSleeper starts a process that only sleeps, to be paused, and
// kills it when the test ends.
func startSleeper(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start sleep(1) to pause: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd.Process.Pid
}

// processState returns pid's state letter from /proc (T: stopped).
func processState(t *testing.T, pid int) byte {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) S ...: the state follows the command's closing parenthesis.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	return b[i+2]
}

// TestPauserStopsAndResumes: the process is seen stopped during the
// pauses, each pause lasts at least as long as asked, and the process is
// left running.
func TestPauserStopsAndResumes(t *testing.T) {
	pid := startSleeper(t)
	p := Pauses{Every: 40 * time.Millisecond, For: 15 * time.Millisecond}
	now := time.Now()
	ps := startPauser(p, pid, now, now.Add(time.Hour))
	seenStopped := false
	for range 300 { // about 300 ms of polls: several pauses
		if processState(t, pid) == 'T' {
			seenStopped = true
		}
		time.Sleep(time.Millisecond)
	}
	log := ps.finish()
	if log.err != nil {
		t.Fatal(log.err)
	}
	if !seenStopped || len(log.windows) < 2 {
		t.Fatalf("stopped seen %v, %d pauses: want the process seen stopped and at least 2 pauses", seenStopped, len(log.windows))
	}
	for _, w := range log.windows {
		if d := w.End.Sub(w.Start); d < p.For {
			t.Errorf("a pause of %v, asked %v", d, p.For)
		}
	}
	for i := 0; processState(t, pid) == 'T'; i++ {
		if i == 1000 {
			t.Fatal("the process was left stopped")
		}
		time.Sleep(time.Millisecond)
	}
	if !log.realtime && os.Geteuid() == 0 {
		t.Log("the pausing thread's real-time priority was refused, as root")
	}
}

// TestRunMarksPauses: a run with pauses pauses the target's server
// process, none due at or after the run's end, and marks the pauses and
// the seconds they touch in its result and report. The server here is in
// this process; the process paused is a sleeper standing in for it.
func TestRunMarksPauses(t *testing.T) {
	c, _, mix, skew := serveNoop(t)
	tg := NewTarget("noop", c, testFixture(2, 2))
	tg.ServerPid = startSleeper(t)
	o := Options{Conns: 2, Duration: 600 * time.Millisecond, Mix: mix, Skew: skew, Seed: 1,
		Pauses: Pauses{Every: 200 * time.Millisecond, For: 10 * time.Millisecond}}
	r, err := Run(context.Background(), tg, o)
	if err != nil {
		t.Fatal(err)
	}
	marked := 0
	for _, s := range r.Series {
		if s.Paused {
			marked++
		}
	}
	// Due at 200 and 400 ms; the one due at the run's end is not taken.
	if len(r.Pauses) != 2 || marked == 0 || r.DuringPauses == nil {
		t.Fatalf("pauses %+v, %d seconds marked, during %v: want 2 pauses, marked", r.Pauses, marked, r.DuringPauses)
	}
	var b strings.Builder
	if err := Single(r).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "pauses of") || !strings.Contains(b.String(), "seconds with a pause") {
		t.Errorf("report without the pauses:\n%s", b.String())
	}
	warm, _ := o.Warmup(time.Second)
	if warm.Pauses.On() {
		t.Error("a warm-up would pause the server")
	}
}

// TestRunRefusesPausesHere: a server in this process is not paused,
// which would pause the load with it.
func TestRunRefusesPausesHere(t *testing.T) {
	c, served, mix, skew := serveNoop(t)
	tg := NewTarget("noop", c, testFixture(1, 1))
	tg.ServerInProcess = true
	_, err := Run(context.Background(), tg, Options{Conns: 1, Duration: 100 * time.Millisecond, Mix: mix, Skew: skew,
		Pauses: Pauses{Every: 50 * time.Millisecond, For: 10 * time.Millisecond}})
	if !errors.Is(err, errPausesHere) || served.Load() != 0 {
		t.Fatalf("err %v, %d served: want errPausesHere before any request", err, served.Load())
	}
}

func TestPausesValidate(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		p  Pauses
		ok bool
	}{
		{Pauses{}, true},
		{Pauses{Every: 10 * time.Second, For: 60 * ms}, true},
		{Pauses{Every: 10 * time.Second}, false},
		{Pauses{For: 60 * ms}, false},
		{Pauses{Every: 60 * ms, For: 60 * ms}, false},
		{Pauses{Every: -time.Second, For: 60 * ms}, false},
		{Pauses{Every: time.Minute, For: maxPause + ms}, false},
		{Pauses{Every: time.Minute, For: maxPause}, true},
	} {
		if err := c.p.Validate(); (err == nil) != c.ok {
			t.Errorf("%+v: error %v, want ok %v", c.p, err, c.ok)
		}
	}
}
