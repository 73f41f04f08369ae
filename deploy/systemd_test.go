package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/policyrun/policyrun/pipeline/config"
)

const (
	unitFile      = "systemd/policyrun.service"
	unitConfig    = "systemd/pipeline.yaml" // the example /etc/policyrun/pipeline.yaml
	maxExposure   = 2.0                     // systemd-analyze security's score of the unit, at most ("OK" is below 3.9)
	unitStateRoot = "/var/lib"              // where StateDirectory= names its directory
)

// A unit is a systemd unit file: each section's keys with their values,
// in order (a key may be given more than once).
type unit map[string]map[string][]string

func readUnit(t *testing.T) unit {
	t.Helper()
	src, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	u, section := unit{}, ""
	for i, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		case section == "":
			t.Fatalf("%s:%d: a key outside a section", unitFile, i+1)
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s:%d: not key=value: %s", unitFile, i+1, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

// one is the value of a key given once ("" when not given).
func (u unit) one(t *testing.T, section, key string) string {
	t.Helper()
	vs := u[section][key]
	if len(vs) > 1 {
		t.Fatalf("%s: [%s] %s is given %d times", unitFile, section, key, len(vs))
	}
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// seconds reads a systemd time span of seconds and minutes ("30", "30s",
// "1min 30s").
func seconds(t *testing.T, span string) time.Duration {
	t.Helper()
	var d time.Duration
	for _, f := range strings.Fields(span) {
		m := regexp.MustCompile(`^(\d+)(s|sec|min|m)?$`).FindStringSubmatch(f)
		if m == nil {
			t.Fatalf("time span %q: the test reads only seconds and minutes", span)
		}
		n, _ := strconv.Atoi(m[1])
		if m[2] == "min" || m[2] == "m" {
			d += time.Duration(n) * time.Minute
		} else {
			d += time.Duration(n) * time.Second
		}
	}
	return d
}

// TestSystemdUnit checks the unit against the example config and the
// command: the start checks the config first with the same command line,
// a bad config fails the start and is not restarted, the stop's signal is
// one policyrun stops cleanly on and its timeout outlasts the drain, and
// the config writes only where the sandbox lets it.
func TestSystemdUnit(t *testing.T) {
	u := readUnit(t)
	svc := u["Service"]
	start := strings.Fields(u.one(t, "Service", "ExecStart"))
	if len(start) == 0 {
		t.Fatal("no ExecStart")
	}
	if pre := strings.Fields(u.one(t, "Service", "ExecStartPre")); !slices.Equal(pre, checkArgs(t, start)) {
		t.Errorf("ExecStartPre %q is not ExecStart with --check (%q)", pre, checkArgs(t, start))
	}
	// A reload checks the config as the start does, then sends the
	// signal run.go reloads on.
	if reload := svc["ExecReload"]; len(reload) != 2 || !slices.Equal(strings.Fields(reload[0]), checkArgs(t, start)) ||
		reload[1] != "/bin/kill -HUP $MAINPID" {
		t.Errorf("ExecReload %q: want ExecStart with --check, then /bin/kill -HUP $MAINPID", reload)
	}

	// run.go stops cleanly on SIGTERM and SIGINT.
	if sig := u.one(t, "Service", "KillSignal"); sig != "" && sig != "SIGTERM" && sig != "SIGINT" {
		t.Errorf("KillSignal=%s: policyrun stops cleanly on SIGTERM or SIGINT", sig)
	}
	cfg := loadConfig(t, unitConfig, configArg(t, start))
	if stop := seconds(t, u.one(t, "Service", "TimeoutStopSec")); stop <= cfg.Service.Grace {
		t.Errorf("TimeoutStopSec %v is not more than the example's service.grace %v", stop, cfg.Service.Grace)
	}
	if u.one(t, "Service", "Restart") != "on-failure" {
		t.Errorf("Restart=%s, want on-failure", u.one(t, "Service", "Restart"))
	}
	// systemd restarts a failed ExecStartPre whatever its status
	// (RestartPreventExitStatus is the main process's): only the start
	// limit ends the loop of a bad config, which fails at once, so it
	// must be reached within its interval.
	burst, _ := strconv.Atoi(u.one(t, "Unit", "StartLimitBurst"))
	interval := seconds(t, u.one(t, "Unit", "StartLimitIntervalSec"))
	if restart := seconds(t, u.one(t, "Service", "RestartSec")); burst == 0 || time.Duration(burst)*restart >= interval {
		t.Errorf("StartLimitBurst=%d starts every RestartSec=%v do not fit in StartLimitIntervalSec=%v: a bad config would be retried for ever",
			burst, restart, interval)
	}

	for key, want := range map[string]string{"DynamicUser": "yes", "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes"} {
		if got := u.one(t, "Service", key); got != want {
			t.Errorf("%s=%s, want %s", key, got, want)
		}
	}
	if u.one(t, "Service", "SupplementaryGroups") == "" {
		t.Error("no SupplementaryGroups: the dynamic user could read none of /var/log's group-readable files")
	}

	// ProtectSystem=strict: the state directory is the only place the
	// unit may write.
	state := u.one(t, "Service", "StateDirectory")
	if state == "" {
		t.Fatal("no StateDirectory: the unit could write its checkpoints nowhere")
	}
	stateDir := filepath.Join(unitStateRoot, state)
	files := filesOf(cfg)
	for _, p := range files.writes {
		if !strings.HasPrefix(p, stateDir+"/") {
			t.Errorf("%s writes %s, outside the unit's StateDirectory %s", unitConfig, p, stateDir)
		}
	}
	if slices.ContainsFunc(cfg.Inputs, func(in config.Input) bool { return in.DB == "" }) {
		t.Errorf("%s: an input without db would read its files again from their ends at each start", unitConfig)
	}
	for _, p := range append(files.tails, files.reads...) {
		for _, hidden := range []string{"/home", "/root", "/run/user"} {
			if strings.HasPrefix(p, hidden+"/") {
				t.Errorf("%s reads %s, which ProtectHome=yes hides", unitConfig, p)
			}
		}
	}
}

// TestSystemdCommands runs the unit's commands on the example config in
// a root made of the unit's directories: ExecStartPre passes; a bad
// config exits with a status that RestartPreventExitStatus keeps from
// restarting (should the main process find it); ExecStart runs,
// ExecReload refuses a bad policy and reloads a good one, and the run
// stops on KillSignal within TimeoutStopSec, with its output's receiver
// unreachable.
func TestSystemdCommands(t *testing.T) {
	bin := binary(t)
	t.Parallel()
	u := readUnit(t)
	start := strings.Fields(u.one(t, "Service", "ExecStart"))
	conf := configArg(t, start)
	cfg := loadConfig(t, unitConfig, conf)
	r := newRoot(t, filepath.Dir(conf), filepath.Join(unitStateRoot, u.one(t, "Service", "StateDirectory")), u.one(t, "Service", "ReadOnlyPaths"))
	if err := os.CopyFS(r.path(filepath.Dir(conf)), os.DirFS(filepath.Dir(unitConfig))); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(unitConfig)
	if err != nil {
		t.Fatal(err)
	}
	// The binary where ExecStart has it is the one built here.
	args := strings.Fields(r.remap(strings.Join(start[1:], " ")))
	if err := os.WriteFile(r.path(conf), []byte(r.remap(string(src))), 0o644); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, bin, args)

	bad := filepath.Join(filepath.Dir(r.path(conf)), "bad.yaml")
	if err := os.WriteFile(bad, []byte("pipeline:\n  inputs:\n    - name: tail\n      paht: /var/log/syslog\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runPolicyrun(t, bin, checkArgs(t, append(args[:len(args)-1:len(args)-1], bad))...)
	if code == 0 || !slices.Contains(strings.Fields(u.one(t, "Service", "RestartPreventExitStatus")), strconv.Itoa(code)) {
		t.Errorf("a bad config: exit %d, which RestartPreventExitStatus=%s does not keep from restarting:\n%s",
			code, u.one(t, "Service", "RestartPreventExitStatus"), out)
	}

	// A run with a line to deliver and no receiver: the stop waits
	// service.grace for it, and must end before systemd's SIGKILL.
	for _, p := range cfg.Inputs[0].Paths {
		if err := os.WriteFile(r.path(p), nil, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	setScalars(t, r.path(conf), "service.metrics", "127.0.0.1:0")
	a := startAgent(t, bin, args...)
	base := "http://" + a.metricsAddr(t)
	waitStatus(t, base+"/readyz", 200)
	waitCheckpointed(t, r.path(cfg.Inputs[0].DB), filepath.Base(cfg.Inputs[0].Paths[0]))
	f, err := os.OpenFile(r.path(cfg.Inputs[0].Paths[0]), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "Dec  1 10:00:02 web-1 sshd[4243]: Accepted publickey for deploy")
	f.Close()
	waitBuffered(t, base)

	// systemctl reload: ExecReload's commands in turn, $MAINPID the
	// agent's. A bad policy fails the check, so the signal is not sent;
	// mended, the check passes and the agent reloads.
	policy := filepath.Join(filepath.Dir(r.path(conf)), cfg.Filters[0].File)
	good, err := os.ReadFile(policy)
	if err != nil {
		t.Fatal(err)
	}
	reload := func() (int, string) {
		for _, line := range u["Service"]["ExecReload"] {
			args := strings.Fields(strings.ReplaceAll(r.remap(line), "$MAINPID", strconv.Itoa(a.cmd.Process.Pid)))
			if args[0] == start[0] {
				if code, out := runPolicyrun(t, bin, args[1:]...); code != 0 {
					return code, out
				}
				continue
			}
			if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("ExecReload=%s: %v\n%s", line, err, out)
			}
		}
		return 0, ""
	}
	if err := os.WriteFile(policy, []byte("policy \"host-logs\"\n\ndrop when .log == 1 +\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _ := reload(); code == 0 {
		t.Error("ExecReload passed a policy that does not compile")
	}
	if err := os.WriteFile(policy, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := reload(); code != 0 {
		t.Fatalf("ExecReload: exit %d\n%s", code, out)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(get(t, base+"/metrics"), "policyrun_reloads_total{result=\"ok\"} 1\n") {
		if time.Now().After(deadline) {
			t.Fatalf("the agent did not reload:\n%s", a.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	sig := syscall.SIGTERM
	if u.one(t, "Service", "KillSignal") == "SIGINT" {
		sig = syscall.SIGINT
	}
	limit := seconds(t, u.one(t, "Service", "TimeoutStopSec"))
	took := a.stop(t, sig, limit)
	t.Logf("stopped in %v with the collector unreachable (service.grace %v, TimeoutStopSec %v)", took.Round(time.Millisecond), cfg.Service.Grace, limit)
}

// TestSystemdAnalyze: systemd's own checks of the unit, with the binary
// where ExecStart names it being the one built here: `systemd-analyze
// verify` says nothing, and `systemd-analyze security` scores its
// sandbox at most maxExposure.
func TestSystemdAnalyze(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze is not installed (Debian's systemd package; .ci/run installs it)")
	}
	bin := binary(t)
	u := readUnit(t)
	exe := strings.Fields(u.one(t, "Service", "ExecStart"))[0]
	src, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	unitCopy := filepath.Join(t.TempDir(), filepath.Base(unitFile))
	if err := os.WriteFile(unitCopy, []byte(strings.ReplaceAll(string(src), exe, bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("systemd-analyze", "verify", unitCopy).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", unitFile, err, out)
	}
	out, err = exec.Command("systemd-analyze", "security", "--offline=true", unitCopy).CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security %s: %v\n%s", unitFile, err, out)
	}
	if score, _ := strconv.ParseFloat(string(m[1]), 64); score > maxExposure {
		t.Errorf("systemd-analyze security scores the unit's exposure %.1f, more than %.1f:\n%s", score, maxExposure, out)
	}
}
