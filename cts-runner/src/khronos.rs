//! `cts-runner khronos`: runs tests of Khronos CTS suite binaries (`test_basic`,
//! `test_half`, ... built by the user; this project ships none of the CTS) against one
//! platform, one process per test with a timeout, and judges each result from its exit
//! status and log: a test that reports its feature unsupported, or skips every
//! configuration it tried, counts as skipped, not passed.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The async-copy and prefetch tests: the default selection of `test_basic` (other
/// suites run whole by default).
pub const ASYNC_TESTS: &[&str] = &[
    "async_copy_global_to_local",
    "async_copy_local_to_global",
    "async_strided_copy_global_to_local",
    "async_strided_copy_local_to_global",
    "async_copy_global_to_local2D",
    "async_copy_local_to_global2D",
    "async_copy_global_to_local3D",
    "async_copy_local_to_global3D",
    "async_work_group_copy_fence_import_after_export_aliased_local",
    "async_work_group_copy_fence_import_after_export_aliased_global",
    "async_work_group_copy_fence_import_after_export_aliased_global_and_local",
    "async_work_group_copy_fence_export_after_import_aliased_local",
    "async_work_group_copy_fence_export_after_import_aliased_global",
    "async_work_group_copy_fence_export_after_import_aliased_global_and_local",
    "prefetch",
];

#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Passed,
    Skipped(String),
    Failed(String),
}

#[derive(Clone, Debug)]
pub struct Outcome {
    /// The suite binary's file name (`test_basic`).
    pub suite: String,
    pub test: String,
    pub verdict: Verdict,
    pub seconds: f64,
    /// Configurations the test tried, and how many of them it skipped itself.
    pub configs: usize,
    pub skipped_configs: usize,
}

/// One test of one suite binary.
#[derive(Clone, Debug)]
pub struct Test {
    pub binary: PathBuf,
    /// Empty: the whole suite in one process (reported as `all`).
    pub name: String,
    /// Options for the suite before the test's name (`-w`: the suite's quick mode).
    pub options: Vec<String>,
    /// Where to keep the test's output (`<dir>/<suite>/<test>.log`), if anywhere.
    pub logs: Option<PathBuf>,
}

impl Test {
    pub fn suite(&self) -> String {
        suite_name(&self.binary)
    }
}

/// A suite's name: its binary's file name.
pub fn suite_name(binary: &Path) -> String {
    binary.file_name().map_or_else(|| binary.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// Judges one test from its exit status (None: killed at the timeout) and its log.
pub fn judge(test: &str, status: Option<i32>, log: &str, seconds: f64) -> Outcome {
    let configs = log.lines().filter(|l| l.starts_with("Testing ")).count();
    let skipped_configs = log.lines().filter(|l| l.starts_with("Skipping due to")).count();
    // The harness prints "<test> test not supported" when a test skipped itself; a
    // test that only skips some of its parts (sizeof without images) still passed.
    let unsupported = log.lines().any(|l| l.trim() == format!("{test} test not supported")).then(|| {
        let why = log.lines().find(|l| l.contains("not supported") || l.contains("Skipping")).unwrap_or("");
        why.trim().to_string()
    });
    // A name the suite does not know runs nothing and still exits 0 (test_conversions'
    // listed "conversions").
    let ran_nothing = log.lines().find(|l| l.contains("Unable to parse function name")).map(|l| l.trim().to_string());
    let verdict = match status {
        None => Verdict::Failed(format!("timed out after {seconds:.0} s")),
        Some(0) if ran_nothing.is_some() => {
            Verdict::Failed(format!("ran nothing: {}", ran_nothing.unwrap_or_default()))
        }
        Some(0) if !log.contains("PASSED test.") => Verdict::Failed("exited 0 without 'PASSED test.'".into()),
        Some(0) => match unsupported {
            Some(why) => Verdict::Skipped(why),
            None if configs > 0 && skipped_configs >= configs => {
                Verdict::Skipped(format!("all {configs} configurations skipped by the test"))
            }
            None => Verdict::Passed,
        },
        Some(code) => {
            let why = log.lines().rev().find(|l| l.contains("FAIL") || l.contains("ERROR")).unwrap_or("").trim();
            Verdict::Failed(format!("exit status {code}: {why}"))
        }
    };
    Outcome { suite: String::new(), test: test.to_string(), verdict, seconds, configs, skipped_configs }
}

/// The outcomes as the suite's, for its JUnit and JSON writers.
pub fn as_suite(outcomes: &[Outcome]) -> Vec<crate::suite::Outcome> {
    use crate::suite::Verdict as V;
    outcomes
        .iter()
        .map(|o| crate::suite::Outcome {
            name: format!("khronos/{}/{}", o.suite, o.test),
            verdict: match &o.verdict {
                Verdict::Passed => V::Passed,
                Verdict::Skipped(w) => V::Skipped(w.clone()),
                Verdict::Failed(w) => V::Failed(w.clone()),
            },
            seconds: o.seconds,
        })
        .collect()
}

/// Passed, skipped and failed tests of one suite (or all, for `None`).
pub fn counts(outcomes: &[Outcome], suite: Option<&str>) -> (usize, usize, usize) {
    let of = outcomes.iter().filter(|o| suite.map_or(true, |s| o.suite == s));
    of.fold((0, 0, 0), |(p, s, f), o| match o.verdict {
        Verdict::Passed => (p + 1, s, f),
        Verdict::Skipped(_) => (p, s + 1, f),
        Verdict::Failed(_) => (p, s, f + 1),
    })
}

/// The tests a CTS suite binary offers (from its `--list` listing).
pub fn available(binary: &Path) -> Result<Vec<String>, String> {
    let out = Command::new(binary)
        .arg("--list")
        .output()
        .map_err(|e| format!("cannot run {}: {e} (pass the path of a built CTS suite)", binary.display()))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let names: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .map(str::to_string)
        .collect();
    if names.is_empty() {
        return Err(format!("{} --list listed no tests: is it a CTS suite binary?", binary.display()));
    }
    Ok(names)
}

/// Runs `tests` with `jobs` at a time; `env` is added to each child's environment.
pub fn run(
    tests: &[Test],
    env: &[(String, String)],
    jobs: usize,
    timeout: Duration,
    progress: &(dyn Fn(&Outcome) + Sync),
) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(test) = tests.get(i) else { break };
                let o = run_one(test, env, timeout);
                progress(&o);
                results.lock().unwrap().push((i, o));
            });
        }
    });
    let mut r = results.into_inner().unwrap();
    r.sort_by_key(|(i, _)| *i);
    r.into_iter().map(|(_, o)| o).collect()
}

fn run_one(t: &Test, env: &[(String, String)], timeout: Duration) -> Outcome {
    let start = Instant::now();
    let test = if t.name.is_empty() { "all" } else { t.name.as_str() };
    let child = Command::new(&t.binary)
        .args(&t.options)
        .args((!t.name.is_empty()).then_some(test))
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            return Outcome { suite: t.suite(), ..judge(test, Some(-1), &format!("ERROR: cannot start: {e}"), 0.0) }
        }
    };
    // Read the pipes while waiting, so a chatty test cannot block on a full pipe.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st.code().or(Some(-1)),
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(_) => break Some(-1),
        }
    };
    let log = reader.join().unwrap_or_default() + &err_reader.join().unwrap_or_default();
    if let Some(dir) = &t.logs {
        let dir = dir.join(t.suite());
        // A log that cannot be written costs the report nothing else.
        let _ = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(dir.join(format!("{test}.log")), &log));
    }
    Outcome { suite: t.suite(), ..judge(test, status, &log, start.elapsed().as_secs_f64()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        assert_eq!(judge("t", Some(0), "Testing a\nPASSED test.\n", 1.0).verdict, Verdict::Passed);
        let vacuous = "hostptr...\n\tNote: device does not support images. Skipping test...\nhostptr test not supported\nPASSED test.\n";
        assert!(matches!(judge("hostptr", Some(0), vacuous, 1.0).verdict, Verdict::Skipped(_)));
        let partly = "images are not supported by this device. Skipping test.\nsizeof passed\nPASSED test.\n";
        assert_eq!(judge("sizeof", Some(0), partly, 1.0).verdict, Verdict::Passed);
        let all_skipped = "Testing 1\nSkipping due to resource requirements\nPASSED test.\n";
        assert!(matches!(judge("t", Some(0), all_skipped, 1.0).verdict, Verdict::Skipped(_)));
        let some = judge("t", Some(0), "Testing 1\nSkipping due to x\nTesting 2\nPASSED test.\n", 1.0);
        assert_eq!((some.verdict, some.configs, some.skipped_configs), (Verdict::Passed, 2, 1));
        assert!(matches!(judge("t", Some(1), "FAILED test.\n", 1.0).verdict, Verdict::Failed(_)));
        assert!(matches!(judge("t", None, "", 300.0).verdict, Verdict::Failed(_)));
        assert!(matches!(judge("t", Some(0), "crashed?", 1.0).verdict, Verdict::Failed(_)));
        let nothing = "**** ERROR:  Unable to parse function name conversions.  Skipping....\nPASSED test.\n";
        assert!(matches!(judge("conversions", Some(0), nothing, 1.0).verdict, Verdict::Failed(_)));
    }

    #[test]
    fn counts_per_suite() {
        let o = |suite: &str, passed: bool| Outcome {
            suite: suite.into(),
            ..judge("t", Some(i32::from(!passed)), if passed { "PASSED test." } else { "FAILED test." }, 1.0)
        };
        let all = [o("test_half", true), o("test_half", false), o("test_basic", true)];
        assert_eq!(counts(&all, Some("test_half")), (1, 0, 1));
        assert_eq!(counts(&all, Some("test_basic")), (1, 0, 0));
        assert_eq!(counts(&all, None), (2, 0, 1));
        assert_eq!(suite_name(Path::new("/cts/build/half/test_half")), "test_half");
    }
}
