//! `cts-runner suite`: our own conformance suites, run against one platform: every case
//! is a kernel launch checked byte for byte against a host reference. Prints progress
//! (a bar on a terminal, lines otherwise) and a summary; writes JUnit XML and JSON on
//! request; fails when any case fails.

pub mod async_copies;
pub mod kernels;
pub mod programs;

use std::io::{IsTerminal, Write};
use std::time::Instant;

use crate::cl::cl_program;
use crate::session::Session;

/// How one case ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Passed,
    Skipped(String),
    Failed(String),
}

pub struct Case<'a> {
    /// `suite/group/case`, matched by `--filter`.
    pub name: String,
    pub run: Box<dyn Fn(&Session) -> Verdict + 'a>,
}

pub struct Outcome {
    pub name: String,
    pub verdict: Verdict,
    pub seconds: f64,
}

/// Runs the cases matching any of `filters` (all when empty).
pub fn run(session: &Session, cases: Vec<Case>, filters: &[String]) -> Vec<Outcome> {
    let cases: Vec<Case> = cases
        .into_iter()
        .filter(|c| filters.is_empty() || filters.iter().any(|f| crate::filter::glob(f, &c.name)))
        .collect();
    let tty = std::io::stderr().is_terminal();
    let mut out = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let t = Instant::now();
        let verdict = (c.run)(session);
        let o = Outcome { name: c.name.clone(), verdict, seconds: t.elapsed().as_secs_f64() };
        if tty {
            let done = (i + 1) * 40 / cases.len();
            eprint!("\r[{}{}] {}/{} {:<60}", "#".repeat(done), " ".repeat(40 - done), i + 1, cases.len(), o.name);
            if let Verdict::Failed(why) = &o.verdict {
                eprintln!("\rFAILED {}: {why}", o.name);
            }
        } else {
            eprintln!("{} {}", label(&o.verdict), o.name);
        }
        out.push(o);
    }
    if tty {
        eprintln!();
    }
    out
}

fn label(v: &Verdict) -> &'static str {
    match v {
        Verdict::Passed => "passed",
        Verdict::Skipped(_) => "skipped",
        Verdict::Failed(_) => "FAILED",
    }
}

/// Summary table per group (the first three parts of the names).
pub fn summary(outcomes: &[Outcome]) -> String {
    let mut groups: Vec<(String, [usize; 3], f64)> = Vec::new();
    for o in outcomes {
        let g = o.name.splitn(4, '/').take(3).collect::<Vec<_>>().join("/");
        let i = match groups.iter().position(|(n, ..)| *n == g) {
            Some(i) => i,
            None => {
                groups.push((g, [0; 3], 0.0));
                groups.len() - 1
            }
        };
        let slot = match o.verdict {
            Verdict::Passed => 0,
            Verdict::Skipped(_) => 1,
            Verdict::Failed(_) => 2,
        };
        groups[i].1[slot] += 1;
        groups[i].2 += o.seconds;
    }
    let mut s = format!("{:<48} {:>8} {:>8} {:>8} {:>9}\n", "group", "passed", "skipped", "failed", "time, s");
    for (g, [p, k, f], t) in &groups {
        s += &format!("{g:<48} {p:>8} {k:>8} {f:>8} {t:>9.2}\n");
    }
    let total = |slot: usize| groups.iter().map(|(_, c, _)| c[slot]).sum::<usize>();
    let time: f64 = groups.iter().map(|g| g.2).sum();
    s += &format!("{:<48} {:>8} {:>8} {:>8} {time:>9.2}\n", "total", total(0), total(1), total(2));
    for o in outcomes {
        match &o.verdict {
            Verdict::Skipped(why) => s += &format!("skipped {}: {why}\n", o.name),
            Verdict::Failed(why) => s += &format!("FAILED {}: {why}\n", o.name),
            Verdict::Passed => {}
        }
    }
    s
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn json(s: &str) -> String {
    s.chars()
        .flat_map(|c| match c {
            '"' => "\\\"".chars().collect::<Vec<_>>(),
            '\\' => "\\\\".chars().collect(),
            '\n' => "\\n".chars().collect(),
            c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32).chars().collect(),
            c => vec![c],
        })
        .collect()
}

pub fn junit(platform: &str, outcomes: &[Outcome]) -> String {
    let failures = outcomes.iter().filter(|o| matches!(o.verdict, Verdict::Failed(_))).count();
    let skipped = outcomes.iter().filter(|o| matches!(o.verdict, Verdict::Skipped(_))).count();
    let time: f64 = outcomes.iter().map(|o| o.seconds).sum();
    let mut s = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" \
         skipped=\"{skipped}\" time=\"{time:.3}\">\n",
        xml(platform),
        outcomes.len()
    );
    for o in outcomes {
        let (class, name) = o.name.rsplit_once('/').unwrap_or(("suite", &o.name));
        s += &format!("  <testcase classname=\"{}\" name=\"{}\" time=\"{:.4}\"", xml(class), xml(name), o.seconds);
        s += &match &o.verdict {
            Verdict::Passed => "/>\n".into(),
            Verdict::Skipped(why) => format!("><skipped message=\"{}\"/></testcase>\n", xml(why)),
            Verdict::Failed(why) => format!("><failure message=\"{}\"/></testcase>\n", xml(why)),
        };
    }
    s + "</testsuite>\n"
}

pub fn to_json(platform: &str, outcomes: &[Outcome]) -> String {
    let cases: Vec<String> = outcomes
        .iter()
        .map(|o| {
            let why = match &o.verdict {
                Verdict::Passed => String::new(),
                Verdict::Skipped(w) | Verdict::Failed(w) => format!(", \"reason\": \"{}\"", json(w)),
            };
            format!(
                "    {{\"name\": \"{}\", \"result\": \"{}\", \"seconds\": {:.4}{why}}}",
                json(&o.name),
                label(&o.verdict),
                o.seconds
            )
        })
        .collect();
    format!("{{\n  \"platform\": \"{}\",\n  \"cases\": [\n{}\n  ]\n}}\n", json(platform), cases.join(",\n"))
}

/// Writes `text` to `path`, reporting failure on stderr.
pub fn write(path: &str, text: &str) {
    if let Err(e) = std::fs::File::create(path).and_then(|mut f| f.write_all(text.as_bytes())) {
        eprintln!("cts-runner: {path}: {e}");
    }
}

/// A case that must fail (`suite --selftest-failure`): a kernel writes 1 where 2 is
/// expected, to show that failures are reported and fail the run.
pub fn failing_case<'a>() -> Case<'a> {
    Case {
        name: "selftest/wrong_result/kernel".into(),
        run: Box::new(|s: &Session| {
            let run = || -> Result<Verdict, String> {
                let p = s.build("kernel void wrong(global int *o) { o[get_global_id(0)] = 1; }")?;
                let k = s.kernel(p, "wrong")?;
                let m = s.buffer_of(&[0; 16])?;
                crate::session::arg(k, 0, &m)?;
                s.run(k, &[4], None)?;
                let got = s.read(m, 16)?;
                Ok(match got.chunks(4).all(|c| c == 2i32.to_ne_bytes()) {
                    true => Verdict::Passed,
                    false => Verdict::Failed(format!("expected 2 in every element, read {got:?}")),
                })
            };
            run().unwrap_or_else(Verdict::Failed)
        }),
    }
}

/// Programs built once for all the cases that share them, by key.
pub type Programs = std::cell::RefCell<std::collections::HashMap<String, Result<usize, String>>>;

/// A skip rule: the reason a device cannot run a case, if it cannot.
pub type Needs<'a> = Box<dyn Fn(&Session) -> Option<String> + 'a>;

/// Skips where the device lacks `ext`.
pub fn lacking(ext: Option<&str>) -> Needs<'_> {
    Box::new(move |s: &Session| match ext {
        Some(e) if !s.has_extension(e) => Some(format!("the device lacks {e}")),
        _ => None,
    })
}

/// Runs `f` on a program built once (with -cl-std=CL3.0) for all cases sharing `key`;
/// a build failure fails each of them.
pub fn with_program<'a>(
    programs: &'a Programs,
    key: &'a str,
    source: impl Fn() -> String + 'a,
    needs: Needs<'a>,
    f: impl Fn(&Session, cl_program) -> Result<Verdict, String> + 'a,
) -> Box<dyn Fn(&Session) -> Verdict + 'a> {
    Box::new(move |s: &Session| {
        if let Some(why) = needs(s) {
            return Verdict::Skipped(why);
        }
        let p = programs
            .borrow_mut()
            .entry(key.to_string())
            .or_insert_with(|| s.build_with(&source(), "-cl-std=CL3.0").map(|p| p as usize))
            .clone();
        match p {
            Ok(p) => f(s, p as cl_program).unwrap_or_else(Verdict::Failed),
            Err(e) => Verdict::Failed(e),
        }
    })
}

/// Deterministic pseudo-random numbers (xorshift64) for the suites' inputs.
pub(crate) fn random(seed: u64) -> impl Iterator<Item = u64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    std::iter::repeat_with(move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    })
}
