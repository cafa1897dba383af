package main

import (
	"strings"
	"testing"
	"time"

	"marketd/internal/procs"
	"marketd/internal/stall"
	"marketd/snapshot"
	"marketd/transport"
)

func TestParseConfig(t *testing.T) {
	defaults := config{
		addr:                 ":8080",
		dataDir:              "./data",
		fsync:                "always",
		commitInterval:       DefaultCommitInterval,
		snapCommitInterval:   DefaultSnapshotCommitInterval,
		defaultTier:          "standard",
		signupBonusKP:        1000,
		anonRatePerMinute:    transport.DefaultAnonRatePerMinute,
		snapshotEvery:        snapshot.DefaultEvery,
		snapshotEveryRecords: snapshot.DefaultEveryRecords,
		snapshotCPUShare:     snapshot.DefaultCPUShare,
		snapshotNice:         snapshot.DefaultThreadNice,
		passwordCost:         transport.DefaultPasswordCost,
		oracleBondKP:         100,
		challengeWindow:      2 * time.Hour,
		voteWindow:           24 * time.Hour,
		idemRetention:        24 * time.Hour,
		idemKeys:             1000,
		logFormat:            "text",
		logLevel:             "info",
		backupDir:            "./backups",
		registrationsPerHour: transport.DefaultRegistrationsPerHour,
		keyChangesPerHour:    transport.DefaultKeyChangesPerHour,
		passwordChecksPerMin: transport.DefaultPasswordChecksPerMinute,
		maxConnsPerClient:    transport.DefaultMaxConnsPerClient,
		custody:              "manual",
		voteStakeKP:          10,
		voteQuorumKP:         10_000,
		minVoters:            5,
		gcHeadroomMiB:        DefaultGCHeadroomMiB,
		spareProcs:           procs.DefaultSpare,
		stallThreshold:       stall.DefaultThreshold,
		stallWindow:          stall.DefaultWindow,
		stallFiles:           stall.DefaultFiles,
		stallMaxMiB:          stall.DefaultMaxFileBytes >> 20,
	}
	with := func(change func(*config)) config {
		c := defaults
		change(&c)
		return c
	}
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		want    config
		wantErr string // a part of the error; "" for none
	}{
		{name: "defaults", want: defaults},
		{
			name: "every flag",
			args: []string{"-addr", "127.0.0.1:0", "-data", "/d", "-admin-password", "secret-pw", "-fsync", "off",
				"-commit-interval", "2ms", "-snapshot-commit-interval", "3ms",
				"-default-tier", "premium", "-signup-bonus", "5", "-anon-rate", "-1", "-snapshot-every", "2m",
				"-snapshot-every-records", "10", "-snapshot-cpu-share", "0.5", "-snapshot-nice", "7", "-password-cost", "4", "-oracle-bond", "7",
				"-oracle-challenge-window", "2s", "-oracle-vote-window", "1m30s",
				"-log-format", "json", "-log-level", "debug", "-access-log", "-metrics-addr", "127.0.0.1:9100",
				"-drain-delay", "3s", "-idempotency-retention", "3h", "-idempotency-keys", "12",
				"-trusted-proxies", "10.0.0.0/8", "-registrations-per-client", "2", "-key-changes-per-account", "3",
				"-password-checks-per-client", "-1", "-max-conns-per-client", "5000",
				"-custody", "record",
				"-deposit-address", "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", "-oracle-vote-stake", "3",
				"-oracle-vote-quorum", "400", "-oracle-min-voters", "2", "-backup-dir", "/b", "-gc-headroom-mib", "64",
				"-spare-procs", "2", "-stall-dir", "/s", "-stall-threshold", "10ms", "-stall-window", "3s",
				"-stall-files", "4", "-stall-max-mib", "32"},
			want: config{addr: "127.0.0.1:0", dataDir: "/d", adminPassword: "secret-pw", fsync: "off", commitInterval: 2 * time.Millisecond,
				snapCommitInterval: 3 * time.Millisecond,
				defaultTier:        "premium", signupBonusKP: 5, anonRatePerMinute: -1, snapshotEvery: 2 * time.Minute,
				snapshotEveryRecords: 10, snapshotCPUShare: 0.5, snapshotNice: 7, passwordCost: 4, oracleBondKP: 7, challengeWindow: 2 * time.Second,
				voteWindow: 90 * time.Second, logFormat: "json", logLevel: "debug", accessLog: true,
				metricsAddr: "127.0.0.1:9100", drainDelay: 3 * time.Second, idemRetention: 3 * time.Hour, idemKeys: 12,
				trustedProxies: "10.0.0.0/8", registrationsPerHour: 2, keyChangesPerHour: 3, passwordChecksPerMin: -1,
				maxConnsPerClient: 5000,
				custody:           "record", depositAddress: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
				voteStakeKP: 3, voteQuorumKP: 400, minVoters: 2, backupDir: "/b", gcHeadroomMiB: 64, spareProcs: 2,
				stallDir: "/s", stallThreshold: 10 * time.Millisecond, stallWindow: 3 * time.Second, stallFiles: 4, stallMaxMiB: 32},
		},
		{name: "reset without a password", args: []string{"-reset-admin-password"}, wantErr: "-reset-admin-password"},
		{name: "reset", args: []string{"-reset-admin-password", "-admin-password", "new-admin-pw"},
			want: with(func(c *config) { c.resetAdminPassword, c.adminPassword = true, "new-admin-pw" })},
		{name: "bad trusted proxy", args: []string{"-trusted-proxies=10.0.0.0/40"}, wantErr: "-trusted-proxies"},
		{name: "zero registrations", args: []string{"-registrations-per-client=0"}, wantErr: "-registrations-per-client"},
		{name: "zero connections", args: []string{"-max-conns-per-client=0"}, wantErr: "-max-conns-per-client"},
		{
			name: "idempotency env",
			env:  map[string]string{"MARKETD_IDEMPOTENCY_RETENTION": "48h", "MARKETD_IDEMPOTENCY_KEYS": "5000"},
			want: with(func(c *config) { c.idemRetention, c.idemKeys = 48*time.Hour, 5000 }),
		},
		{name: "zero idempotency retention", args: []string{"-idempotency-retention=0s"}, wantErr: "-idempotency-retention"},
		{name: "zero idempotency keys", args: []string{"-idempotency-keys=0"}, wantErr: "-idempotency-keys"},
		{
			name: "env",
			env: map[string]string{"MARKETD_SIGNUP_BONUS": "50", "MARKETD_ADMIN_PASSWORD": "env-secret",
				"MARKETD_SNAPSHOT_EVERY_RECORDS": "7", "MARKETD_DEFAULT_TIER": "unlimited"},
			want: with(func(c *config) {
				c.signupBonusKP, c.adminPassword, c.snapshotEveryRecords, c.defaultTier = 50, "env-secret", 7, "unlimited"
			}),
		},
		{
			name: "flag wins over env",
			args: []string{"-signup-bonus=70", "-fsync=always"},
			env:  map[string]string{"MARKETD_SIGNUP_BONUS": "50", "MARKETD_FSYNC": "off"},
			want: with(func(c *config) { c.signupBonusKP = 70 }),
		},
		{
			name: "oracle env",
			env: map[string]string{"MARKETD_ORACLE_CHALLENGE_WINDOW": "5m", "MARKETD_ORACLE_VOTE_WINDOW": "1h",
				"MARKETD_ORACLE_BOND": "250"},
			want: with(func(c *config) { c.challengeWindow, c.voteWindow, c.oracleBondKP = 5*time.Minute, time.Hour, 250 }),
		},
		{
			name: "custody and vote env",
			env: map[string]string{"MARKETD_CUSTODY": "record", "MARKETD_DEPOSIT_ADDRESS": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
				"MARKETD_ORACLE_VOTE_STAKE": "20", "MARKETD_ORACLE_VOTE_QUORUM": "500", "MARKETD_ORACLE_MIN_VOTERS": "3"},
			want: with(func(c *config) {
				c.custody, c.depositAddress = "record", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
				c.voteStakeKP, c.voteQuorumKP, c.minVoters = 20, 500, 3
			}),
		},
		{name: "unknown custody", args: []string{"-custody=auto"}, wantErr: "-custody"},
		{name: "bad deposit address", args: []string{"-deposit-address=0x12"}, wantErr: "-deposit-address"},
		{name: "deposit address checksum", args: []string{"-deposit-address=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"}, wantErr: "-deposit-address"},
		{name: "zero vote stake", args: []string{"-oracle-vote-stake=0"}, wantErr: "-oracle-vote-stake"},
		{name: "zero quorum", args: []string{"-oracle-vote-quorum=0"}, wantErr: "-oracle-vote-quorum"},
		{name: "zero voters", args: []string{"-oracle-min-voters=0"}, wantErr: "-oracle-min-voters"},
		{name: "zero challenge window", args: []string{"-oracle-challenge-window=0s"}, wantErr: "-oracle-challenge-window"},
		{name: "negative vote window", args: []string{"-oracle-vote-window=-1h"}, wantErr: "-oracle-vote-window"},
		{name: "bad vote window", env: map[string]string{"MARKETD_ORACLE_VOTE_WINDOW": "soon"}, wantErr: "MARKETD_ORACLE_VOTE_WINDOW"},
		{name: "zero oracle bond", args: []string{"-oracle-bond=0"}, wantErr: "-oracle-bond"},
		{name: "empty env is unset", env: map[string]string{"MARKETD_ADDR": ""}, want: defaults},
		{name: "fsync", args: []string{"-fsync=sometimes"}, wantErr: "-fsync"},
		{name: "log format", args: []string{"-log-format=xml"}, wantErr: "-log-format"},
		{name: "log level", args: []string{"-log-level=loud"}, wantErr: "-log-level"},
		{name: "log level env", env: map[string]string{"MARKETD_LOG_LEVEL": "warn"},
			want: with(func(c *config) { c.logLevel = "warn" })},
		{name: "negative drain delay", args: []string{"-drain-delay=-1s"}, wantErr: "-drain-delay"},
		{name: "drain delay too long", args: []string{"-drain-delay=1h"}, wantErr: "-drain-delay"},
		{name: "negative bonus", args: []string{"-signup-bonus=-1"}, wantErr: "-signup-bonus"},
		{name: "bonus too large", args: []string{"-signup-bonus=1000000001"}, wantErr: "-signup-bonus"},
		{name: "password cost too low", args: []string{"-password-cost=3"}, wantErr: "-password-cost"},
		{name: "password cost too high", args: []string{"-password-cost=32"}, wantErr: "-password-cost"},
		{name: "unknown tier", args: []string{"-default-tier=gold"}, wantErr: "-default-tier"},
		{name: "zero anon rate", args: []string{"-anon-rate=0"}, wantErr: "-anon-rate"},
		{name: "zero snapshot interval", args: []string{"-snapshot-every=0s"}, wantErr: "-snapshot-every"},
		{name: "zero snapshot records", args: []string{"-snapshot-every-records=0"}, wantErr: "-snapshot-every-records"},
		{name: "zero snapshot CPU share", args: []string{"-snapshot-cpu-share=0"}, wantErr: "-snapshot-cpu-share"},
		{name: "snapshot CPU share over 1", args: []string{"-snapshot-cpu-share=1.5"}, wantErr: "-snapshot-cpu-share"},
		{name: "snapshot at the process's priority", args: []string{"-snapshot-nice=0"}, want: with(func(c *config) { c.snapshotNice = 0 })},
		{name: "negative snapshot nice", args: []string{"-snapshot-nice=-1"}, wantErr: "-snapshot-nice"},
		{name: "snapshot nice over 19", args: []string{"-snapshot-nice=20"}, wantErr: "-snapshot-nice"},
		{name: "a commit interval", args: []string{"-commit-interval=1ms"}, want: with(func(c *config) { c.commitInterval = time.Millisecond })},
		{name: "no snapshot commit interval", args: []string{"-snapshot-commit-interval=0s"}, want: with(func(c *config) { c.snapCommitInterval = 0 })},
		{name: "negative snapshot commit interval", args: []string{"-snapshot-commit-interval=-1ms"}, wantErr: "-snapshot-commit-interval"},
		{name: "snapshot commit interval too long", args: []string{"-snapshot-commit-interval=11ms"}, wantErr: "-snapshot-commit-interval"},
		{name: "negative commit interval", args: []string{"-commit-interval=-1ms"}, wantErr: "-commit-interval"},
		{name: "commit interval too long", args: []string{"-commit-interval=11ms"}, wantErr: "-commit-interval"},
		{name: "no GC headroom", args: []string{"-gc-headroom-mib=0"}, want: with(func(c *config) { c.gcHeadroomMiB = 0 })},
		{name: "negative GC headroom", args: []string{"-gc-headroom-mib=-1"}, wantErr: "-gc-headroom-mib"},
		{name: "GC headroom too large", args: []string{"-gc-headroom-mib=1048577"}, wantErr: "-gc-headroom-mib"},
		{name: "no spare processors", args: []string{"-spare-procs=0"}, want: with(func(c *config) { c.spareProcs = 0 })},
		{name: "spare processors from env", env: map[string]string{"MARKETD_SPARE_PROCS": "0"}, want: with(func(c *config) { c.spareProcs = 0 })},
		{name: "negative spare processors", args: []string{"-spare-procs=-1"}, wantErr: "-spare-procs"},
		{name: "too many spare processors", args: []string{"-spare-procs=257"}, wantErr: "-spare-procs"},
		{name: "stall recorder on", args: []string{"-stall-dir=/s"}, want: with(func(c *config) { c.stallDir = "/s" })},
		{name: "stall recorder from env", env: map[string]string{"MARKETD_STALL_DIR": "/s", "MARKETD_STALL_THRESHOLD": "5ms"},
			want: with(func(c *config) { c.stallDir, c.stallThreshold = "/s", 5*time.Millisecond })},
		{name: "stall threshold without dir", args: []string{"-stall-threshold=5ms"}, wantErr: "-stall-threshold: needs -stall-dir"},
		{name: "stall files without dir", env: map[string]string{"MARKETD_STALL_FILES": "3"}, wantErr: "-stall-files: needs -stall-dir"},
		{name: "zero stall threshold", args: []string{"-stall-dir=/s", "-stall-threshold=0s"}, wantErr: "-stall-threshold"},
		{name: "stall threshold too long", args: []string{"-stall-dir=/s", "-stall-threshold=2m"}, wantErr: "-stall-threshold"},
		{name: "stall window too short", args: []string{"-stall-dir=/s", "-stall-window=10ms"}, wantErr: "-stall-window"},
		{name: "stall window too long", args: []string{"-stall-dir=/s", "-stall-window=2m"}, wantErr: "-stall-window"},
		{name: "zero stall files", args: []string{"-stall-dir=/s", "-stall-files=0"}, wantErr: "-stall-files"},
		{name: "too many stall files", args: []string{"-stall-dir=/s", "-stall-files=1001"}, wantErr: "-stall-files"},
		{name: "zero stall size", args: []string{"-stall-dir=/s", "-stall-max-mib=0"}, wantErr: "-stall-max-mib"},
		{name: "stall size too large", args: []string{"-stall-dir=/s", "-stall-max-mib=4097"}, wantErr: "-stall-max-mib"},
		{name: "not a number", args: []string{"-signup-bonus=many"}, wantErr: "invalid value"},
		{name: "unknown flag", args: []string{"-verbose"}, wantErr: "not defined"},
		{name: "extra argument", args: []string{"serve"}, wantErr: "unexpected arguments"},
		{name: "bad env", env: map[string]string{"MARKETD_SIGNUP_BONUS": "many"}, wantErr: "MARKETD_SIGNUP_BONUS"},
		{name: "env out of range", env: map[string]string{"MARKETD_PASSWORD_COST": "2"}, wantErr: "-password-cost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseConfig(tc.args, func(name string) string { return tc.env[name] })
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseConfig(%q, env %v): error %v, want one mentioning %q", tc.args, tc.env, err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("parseConfig(%q, env %v): %v", tc.args, tc.env, err)
			case got != tc.want:
				t.Fatalf("parseConfig(%q, env %v):\n got %+v\nwant %+v", tc.args, tc.env, got, tc.want)
			}
		})
	}
}
