//! Sweeps as a plan, tasks and a merge (`fptgen sweep --plan-only`,
//! `sweep-run`, `sweep-merge`), on a real Slurm cluster: a one-node
//! cluster on localhost (munged, slurmctld and slurmd of Debian's
//! slurm-wlm, with a generated slurm.conf and munge key in a temporary
//! directory, on ports of its own) runs the plan's job array as submitted
//! (`sbatch OUT/sweep.sbatch`); its merged results must equal those of the
//! local `fptgen sweep` of the same grid. And the bad inputs: a directory
//! that is not a plan, an index out of range, a truncated result file, a
//! model that changed after the plan. Needs yosys, slurm-wlm and munge:
//! fails (never skips) without them (`bash tests/run.sh` installs them).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{fptgen, require, root, snapshot};
use fptgen_sim::tensor::{write_npz, NamedArray, OutValues};

/// A directory with a copy of the tiny example (T = 6 trainable
/// parameters, M = 4, antithetic fitness: an odd N is a failing point)
/// and `data.npz`: 8 samples on the input and output grids, with labels.
fn tiny() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for f in ["model.yaml", "weights.npz"] {
        std::fs::copy(root().join("examples/tiny").join(f), dir.path().join(f)).expect("copy example");
    }
    let (mut x, mut t, mut labels) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..8usize {
        let a = ((i * 37 % 97) as f64 - 48.0) / 32.0;
        let b = ((i * 53 % 89) as f64 - 44.0) / 32.0;
        let (t0, t1) = (((0.5 * a).max(0.0) * 32.0).round() / 32.0, ((0.75 * b).max(0.0) * 32.0).round() / 32.0);
        x.extend([a, b]);
        t.extend([t0, t1]);
        labels.push(i64::from(t1 > t0));
    }
    let arr = |name: &str, v: Vec<f64>| NamedArray { name: name.into(), shape: vec![8, 2], values: OutValues::F64(v) };
    let l = NamedArray { name: "labels".into(), shape: vec![8], values: OutValues::I64(labels) };
    write_npz(&dir.path().join("data.npz"), &[arr("x", x), arr("t", t), l]).expect("write data");
    dir
}

/// A one-node Slurm cluster on localhost, its daemons children of the
/// test; they are stopped (and a job left running cancelled) when it is
/// dropped, also when the test fails.
struct Cluster {
    dir: tempfile::TempDir,
    daemons: Vec<(&'static str, Child)>,
    job: Option<String>,
}

/// Two distinct TCP ports free on localhost now.
fn free_ports() -> (u16, u16) {
    let bind = || std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let (a, b) = (bind(), bind());
    let port = |l: &std::net::TcpListener| l.local_addr().expect("addr").port();
    (port(&a), port(&b))
}

impl Cluster {
    /// Starts munged, slurmctld and slurmd, and waits (30 s at most)
    /// until the node is idle.
    fn start() -> Cluster {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path().to_path_buf();
        for sub in ["state", "spool", "log"] {
            std::fs::create_dir(d.join(sub)).expect("mkdir");
        }
        let mut random = vec![0u8; 1024];
        {
            use std::io::Read;
            std::fs::File::open("/dev/urandom").expect("/dev/urandom").read_exact(&mut random).expect("random key");
        }
        let key = d.join("munge.key");
        std::fs::write(&key, &random).expect("key");
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o400)).expect("chmod key");
        }
        let socket = d.join("munge.sock");
        let (ctld_port, d_port) = free_ports();
        let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(2);
        let p = |s: &str| d.join(s).display().to_string();
        let conf = format!(
            "ClusterName=fptgentest\n\
             SlurmctldHost=localhost\n\
             SlurmctldPort={ctld_port}\n\
             SlurmdPort={d_port}\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             AuthType=auth/munge\n\
             CredType=cred/munge\n\
             AuthInfo=socket={socket}\n\
             StateSaveLocation={state}\n\
             SlurmdSpoolDir={spool}\n\
             SlurmctldPidFile={ctld_pid}\n\
             SlurmdPidFile={d_pid}\n\
             SlurmctldLogFile={ctld_log}\n\
             SlurmdLogFile={d_log}\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             SchedulerType=sched/builtin\n\
             SelectType=select/cons_tres\n\
             SelectTypeParameters=CR_CPU\n\
             SlurmdParameters=config_overrides\n\
             ReturnToService=2\n\
             MpiDefault=none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             MinJobAge=3600\n\
             NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
             PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n",
            socket = socket.display(),
            state = p("state"),
            spool = p("spool"),
            ctld_pid = p("slurmctld.pid"),
            d_pid = p("slurmd.pid"),
            ctld_log = p("log/slurmctld.log"),
            d_log = p("log/slurmd.log"),
        );
        std::fs::write(d.join("slurm.conf"), conf).expect("slurm.conf");
        let mut cluster = Cluster { dir, daemons: Vec::new(), job: None };
        let log = |name: &str| std::fs::File::create(d.join("log").join(format!("{name}.out"))).expect("log");
        let spawn = |name: &'static str, cmd: &mut Command| -> (&'static str, Child) {
            let out = log(name);
            let err = out.try_clone().expect("log");
            let child = cmd.stdin(Stdio::null()).stdout(out).stderr(err).spawn().unwrap_or_else(|e| panic!("starting {name}: {e}"));
            (name, child)
        };
        cluster.daemons.push(spawn(
            "munged",
            Command::new("munged")
                .arg("--foreground")
                .arg("--force")
                .arg(format!("--socket={}", socket.display()))
                .arg(format!("--key-file={}", key.display()))
                .arg(format!("--pid-file={}", p("munged.pid")))
                .arg(format!("--log-file={}", p("log/munged.log")))
                .arg(format!("--seed-file={}", p("munged.seed"))),
        ));
        cluster.wait_for("munged's socket", Duration::from_secs(20), |_| socket.exists());
        let conf = d.join("slurm.conf");
        cluster.daemons.push(spawn("slurmctld", Command::new("slurmctld").arg("-D").arg("-c").arg("-f").arg(&conf)));
        cluster.daemons.push(spawn("slurmd", Command::new("slurmd").arg("-D").arg("-f").arg(&conf).arg("-N").arg("localhost")));
        cluster.wait_for("the node to be idle", Duration::from_secs(60), |c| {
            let (ok, out) = c.slurm("sinfo", &["-h", "-n", "localhost", "-o", "%T"]);
            ok && out.trim() == "idle"
        });
        cluster
    }

    /// Runs a Slurm command against this cluster; its success and stdout.
    fn slurm(&self, cmd: &str, args: &[&str]) -> (bool, String) {
        let out = Command::new(cmd)
            .args(args)
            .env("SLURM_CONF", self.dir.path().join("slurm.conf"))
            .output()
            .unwrap_or_else(|e| panic!("running {cmd}: {e}"));
        (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Polls `ready` every 200 ms; fails the test, with the daemons' logs,
    /// after `limit`.
    fn wait_for(&mut self, what: &str, limit: Duration, mut ready: impl FnMut(&Cluster) -> bool) {
        let start = Instant::now();
        while !ready(self) {
            let dead = self.daemons.iter_mut().find_map(|(name, child)| child.try_wait().ok().flatten().map(|s| format!("{name} exited ({s})")));
            if let Some(dead) = dead {
                panic!("{dead} while waiting for {what}:\n{}", self.logs());
            }
            assert!(start.elapsed() < limit, "no {what} after {limit:?}:\n{}", self.logs());
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The daemons' logs, for a failure's message.
    fn logs(&self) -> String {
        let mut s = String::new();
        if let Ok(entries) = std::fs::read_dir(self.dir.path().join("log")) {
            for e in entries.flatten() {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(15).collect();
                s += &format!("--- {}\n{}\n", e.path().display(), tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
            }
        }
        s
    }

    /// Submits `script` as is; returns the job id.
    fn submit(&mut self, script: &Path) -> String {
        let (ok, out) = self.slurm("sbatch", &["--parsable", script.to_str().expect("utf8")]);
        assert!(ok, "sbatch {} failed: {out}\n{}", script.display(), self.logs());
        let id = out.trim().split(';').next().expect("job id").to_string();
        self.job = Some(id.clone());
        id
    }

    /// Waits (`limit` at most) until job `id` has no task pending or
    /// running; returns `scontrol show job`'s records of its tasks.
    fn wait_job(&mut self, id: &str, limit: Duration) -> String {
        let this = &*self;
        let start = Instant::now();
        loop {
            let (ok, out) = this.slurm("squeue", &["-h", "-j", id, "-o", "%i %T"]);
            if ok && out.trim().is_empty() {
                break;
            }
            assert!(start.elapsed() < limit, "job {id} not done after {limit:?}: {out}\n{}", this.logs());
            std::thread::sleep(Duration::from_millis(500));
        }
        self.job = None;
        let (ok, out) = self.slurm("scontrol", &["show", "job", id]);
        assert!(ok, "scontrol show job {id}: {out}");
        out
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(id) = self.job.take() {
            let _ = self.slurm("scancel", &[&id]);
        }
        // The daemons this test started, by their process ids, last first.
        while let Some((_, mut child)) = self.daemons.pop() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The run's exit code, with its output on failure.
fn ok(r: (i32, String, String), what: &str) -> String {
    assert_eq!(r.0, 0, "{what}:\n{}\n{}", r.1, r.2);
    r.1
}

fn json(path: PathBuf) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).expect("json")
}

#[test]
fn a_job_array_on_slurm_gives_the_local_sweep() {
    require("yosys");
    for tool in ["sbatch", "squeue", "scontrol", "slurmctld", "slurmd", "munged"] {
        let found = Command::new("sh").arg("-c").arg(format!("command -v {tool}")).output().map(|o| o.status.success()).unwrap_or(false);
        assert!(found, "{tool} is not installed: run `bash tests/run.sh` (it installs slurm-wlm and munge) or `apt-get install slurm-wlm munge`");
    }
    let dir = tiny();
    let d = dir.path();
    // P 6 and 8 are both at least T = 6: one design for N 2, one yosys run
    // (two tasks wait for it on the cluster), each point trained. N 3 is
    // odd: its points fail.
    let grid = ["--population", "2,3", "--blocks", "6,8", "--data", "data.npz"];
    let args = |out: &'static str, extra: &[&'static str]| {
        let mut v = vec!["sweep", "model.yaml"];
        v.extend_from_slice(&grid);
        v.extend_from_slice(&["--trainer-only", "-o", out]);
        v.extend_from_slice(extra);
        v
    };

    // Locally: plan, run and merge in one command.
    let (code, local, err) = fptgen(&args("local", &["--jobs", "2"]), d);
    assert_eq!(code, 1, "two points fail:\n{local}\n{err}");
    assert!(err.contains("2 of 4 points failed"), "{err}");
    assert!(local.contains("1 distinct designs: yosys ran 1 times"), "{local}");

    // On Slurm: the plan, its job array submitted as is, the merge.
    let planned = ok(fptgen(&args("slurm", &["--plan-only", "--max-running", "3"]), d), "the plan");
    assert!(planned.contains("4 points") && planned.contains("sbatch slurm/sweep.sbatch"), "{planned}");
    let out = d.join("slurm");
    let script = std::fs::read_to_string(out.join("sweep.sbatch")).expect("sweep.sbatch");
    assert!(script.lines().any(|l| l == "#SBATCH --array=0-3%3"), "{script}");
    assert!(!out.join("results").exists() && !out.join("sweep.csv").exists(), "a plan runs nothing");
    let mut cluster = Cluster::start();
    let id = cluster.submit(&out.join("sweep.sbatch"));
    let record = cluster.wait_job(&id, Duration::from_secs(600));
    drop(cluster);
    // One record per task, by task: N 2 completes, N 3 fails (exit 1).
    let tasks: Vec<(String, String, String)> = record
        .split("\n\n")
        .filter(|r| r.contains("ArrayTaskId="))
        .map(|r| {
            let field = |k: &str| r.split_whitespace().find_map(|w| w.strip_prefix(k)).unwrap_or_default().to_string();
            (field("ArrayTaskId="), field("JobState="), field("ExitCode="))
        })
        .collect();
    let mut tasks = tasks;
    tasks.sort();
    let want: Vec<(String, String, String)> = [("0", "COMPLETED", "0:0"), ("1", "COMPLETED", "0:0"), ("2", "FAILED", "1:0"), ("3", "FAILED", "1:0")]
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(tasks, want, "{record}");
    for i in 0..4 {
        let log = std::fs::read_to_string(out.join(format!("logs/{id}_{i}.log"))).expect("a log per task");
        assert!(log.contains(&format!("task {i} of 4")) && log.contains(&format!("results/{i}.json")), "{log}");
    }
    let (code, merged, err) = fptgen(&["sweep-merge", "slurm"], d);
    assert_eq!(code, 1, "{merged}\n{err}");
    assert!(err.contains("2 of 4 points failed") && !err.contains("no result"), "{err}");
    assert!(merged.contains("1 distinct designs: yosys ran 1 times"), "{merged}");

    // The same results: the CSV byte for byte, the JSON's points and
    // counts, the charts.
    let csv = |o: &str| std::fs::read_to_string(d.join(o).join("sweep.csv")).expect("sweep.csv");
    assert_eq!(csv("slurm"), csv("local"));
    let status: Vec<String> = csv("local").lines().skip(1).map(|l| l.split(',').take(3).collect::<Vec<_>>().join(",")).collect();
    assert_eq!(status, ["2,6,ok", "2,8,ok", "3,6,failed", "3,8,failed"]);
    let (a, b) = (json(d.join("local/sweep.json")), json(d.join("slurm/sweep.json")));
    for k in ["points", "designs", "yosys_runs", "cache_hits", "failed", "yosys", "population", "blocks", "scope", "before", "samples"] {
        assert_eq!(a[k], b[k], "{k}");
    }
    assert!(a["points"][0]["training"]["loss"].is_u64(), "trained: {a}");
    for f in ["area_time.svg", "quality_time.svg"] {
        assert_eq!(std::fs::read(d.join("local").join(f)).expect(f), std::fs::read(out.join(f)).expect(f), "{f}");
    }

    // A task run again, here, writes the same bytes as on the cluster.
    let before = std::fs::read(out.join("results/1.json")).expect("result");
    ok(fptgen(&["sweep-run", "slurm", "--index", "1"], d), "task 1 again");
    assert_eq!(std::fs::read(out.join("results/1.json")).expect("result"), before);
}

#[test]
fn bad_plans_indices_and_results_are_refused_naming_the_file() {
    require("yosys");
    let dir = tiny();
    let d = dir.path();
    // N 3 is odd, which antithetic fitness refuses: its task fails at once,
    // without yosys, and writes its result all the same.
    ok(fptgen(&["sweep", "model.yaml", "--population", "3", "--blocks", "6,8", "--plan-only", "-o", "plan"], d), "the plan");
    let (code, _, err) = fptgen(&["sweep-run", "plan", "--index", "1"], d);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("task 1 (N 3, P 8) failed") && err.contains("even population") && err.contains("plan/results/1.json"), "{err}");
    // A negative index gets the bounded-number message, as every count does.
    let (code, _, err) = fptgen(&["sweep-run", "plan", "--index", "-1"], d);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("invalid value '-1' for '--index <I>'") && err.contains("a whole number from 0 to 4294967295"), "{err}");
    let result = d.join("plan/results/1.json");
    assert!(json(result.clone())["point"]["error"].as_str().expect("error").contains("even population"));

    // Planning the same sweep again keeps the plan and its results.
    let snap = snapshot(&d.join("plan"));
    let again = ok(fptgen(&["sweep", "model.yaml", "--population", "3", "--blocks", "6,8", "--plan-only", "-o", "plan"], d), "the same plan");
    assert!(again.contains("already holds this plan") && again.contains("with 1 results"), "{again}");
    assert_eq!(snapshot(&d.join("plan")), snap, "nothing written");

    // Not a plan: an empty directory, a user's directory, a plan.json
    // that fptgen did not write.
    std::fs::create_dir(d.join("empty")).expect("mkdir");
    std::fs::create_dir(d.join("mine")).expect("mkdir");
    std::fs::write(d.join("mine/plan.json"), "{}").expect("write");
    for (cmd, dir) in [("sweep-run", "empty"), ("sweep-merge", "mine"), ("sweep-merge", "missing")] {
        let mut args = vec![cmd, dir];
        if cmd == "sweep-run" {
            args.extend(["--index", "0"]);
        }
        let (code, _, err) = fptgen(&args, d);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.starts_with(&format!("error: {dir}: is not a sweep plan")) && err.contains("--plan-only"), "{err}");
    }
    assert_eq!(std::fs::read(d.join("mine/plan.json")).expect("kept"), b"{}");

    // An index out of range names the plan and its range; nothing changes.
    let snap = snapshot(&d.join("plan"));
    let (code, _, err) = fptgen(&["sweep-run", "plan", "--index", "2"], d);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--index 2") && err.contains("plan/plan.json has 2 tasks, numbered 0 to 1"), "{err}");
    assert_eq!(snapshot(&d.join("plan")), snap);

    // A missing point: listed, the outputs written, exit 1.
    let (code, out, err) = fptgen(&["sweep-merge", "plan"], d);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("1 of 2 points have no result yet (tasks 0)") && err.contains("sbatch --array=0 plan/sweep.sbatch"), "{err}");
    assert!(out.contains("missing: no result in plan/results/0.json"), "{out}");
    let csv = std::fs::read_to_string(d.join("plan/sweep.csv")).expect("sweep.csv");
    assert!(csv.contains("3,6,failed,missing: no result") && csv.contains("3,8,failed,configuration: population is 3"), "{csv}");

    // A truncated result: an error naming it and the task; nothing written.
    let text = std::fs::read_to_string(&result).expect("result");
    std::fs::write(&result, &text[..text.len() / 2]).expect("truncate");
    let snap = snapshot(&d.join("plan"));
    let (code, _, err) = fptgen(&["sweep-merge", "plan"], d);
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("error: plan/results/1.json: not a complete result") && err.contains("run task 1 again"), "{err}");
    assert_eq!(snapshot(&d.join("plan")), snap, "nothing written");
    // Running the task again replaces it.
    let (code, _, _) = fptgen(&["sweep-run", "plan", "--index", "1"], d);
    assert_eq!(code, 1);
    assert_eq!(std::fs::read_to_string(&result).expect("result"), text);

    // Another task's result in its place is refused too.
    std::fs::write(d.join("plan/results/0.json"), &text).expect("copy");
    let (code, _, err) = fptgen(&["sweep-merge", "plan"], d);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("plan/results/0.json: the result of task 1 (N 3, P 8), not of task 0 (N 3, P 6)"), "{err}");
    std::fs::remove_file(d.join("plan/results/0.json")).expect("rm");

    // A model changed after the plan: the task refuses it, naming it.
    let model = d.join("model.yaml");
    let yaml = std::fs::read_to_string(&model).expect("model");
    std::fs::write(&model, yaml.replace("clock_period_ns: 5", "clock_period_ns: 6")).expect("edit");
    let (code, _, err) = fptgen(&["sweep-run", "plan", "--index", "0"], d);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("model.yaml: changed since the plan") && err.contains("make a new plan"), "{err}");
    assert!(!d.join("plan/results/0.json").exists());

    // A user's file where a result of a new plan would go is never
    // replaced: the plan is refused before anything is written.
    std::fs::write(&model, &yaml).expect("restore");
    std::fs::write(d.join("plan/results/3.json"), "mine").expect("write");
    let snap = snapshot(&d.join("plan"));
    let (code, _, err) =
        fptgen(&["sweep", "model.yaml", "--population", "2,4", "--blocks", "6,8", "--plan-only", "-o", "plan"], d);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("plan/results/3.json: was not written by fptgen"), "{err}");
    assert_eq!(snapshot(&d.join("plan")), snap, "nothing written");
}
